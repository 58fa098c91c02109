/**
 * The text side of a sorted set's entries (retry, schedule, dead): scores as Redis prints them, ZSCAN
 * patterns for a literal substring, and an entry made back into a job to push (src/admin/api/JobSet.ts).
 */
import { parsePayload, type JobPayload } from "../../wire/payload.js";

/** Redis prints scores as the shortest text that round-trips a double (and `inf` for infinities). */
export function parseScore(text: string): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  return Number(text);
}

/** A ZSCAN MATCH pattern for a literal substring: glob metacharacters other than `*` are escaped. */
export function substringPattern(match: string): string {
  return match.includes("*") ? match : `*${match.replace(/[?[\]\\]/g, "\\$&")}*`;
}

/**
 * A popped entry as a retry pushes it (Sidekiq's `SortedEntry#retry`): manual retries do not count
 * against the retry limit (the next failure adds 1 back), and a stale `at` is dropped.
 */
export function requeued(text: string | Buffer, decrementRetryCount = true): JobPayload {
  const job = parsePayload(text.toString());
  if (decrementRetryCount && typeof job.retry_count === "number") job.retry_count -= 1;
  delete job.at;
  return job;
}

/** A Set key that tells apart entries whose bytes differ but decode to the same text. */
export function exactKey(stored: string | Buffer): string {
  return typeof stored === "string" ? stored : stored.toString("latin1");
}

export function toSeconds(at: number | Date): number {
  return at instanceof Date ? at.getTime() / 1000 : at;
}
