/**
 * The job payload: the JSON object stored in queues and sorted sets, field for field as Sidekiq writes
 * it. Fields tsq does not know (Pro's `bid`, Enterprise's `unique_for`, a Ruby middleware's own keys)
 * are kept untouched, in their original order.
 */
import { randomBytes } from "node:crypto";
import { InvalidPayloadError } from "./errors.js";
import { formatTimestampJson } from "./timestamps.js";
import { sameAsRaw, splitTopLevel } from "./rawJson.js";

/** A base class whose constructor hands back the object it is given: a subclass stamps its fields on it. */
class Stamp {
  constructor(target: object) {
    return target;
  }
}

/**
 * The text a payload was parsed from, kept in private fields of the payload object itself (invisible to
 * Object.keys, spread, JSON and reflection, like a property that is not there); its field texts are
 * split only if the job is re-dumped. `inheritSource` carries it to a copy. Private fields rather than a
 * non-enumerable symbol property: defining that property cost every parsed job about 0.4 µs (a map
 * transition V8 does not cache for JSON.parse's objects, and a `{ text }` holder), about as much as the
 * parse itself.
 */
class SourceText extends Stamp {
  #text: string;
  #fields: Map<string, string> | undefined;

  private constructor(target: object, text: string, fields: Map<string, string> | undefined) {
    super(target);
    this.#text = text;
    this.#fields = fields;
  }

  static attach(target: object, text: string, fields?: Map<string, string>): void {
    if (#text in target) {
      target.#text = text;
      target.#fields = fields;
    } else new SourceText(target, text, fields);
  }

  static has(target: object): boolean {
    return #text in target;
  }

  /** The source's field texts (split at the first call), or undefined for a payload not parsed from text. */
  static fields(target: object): Map<string, string> | undefined {
    if (!(#text in target)) return undefined;
    return (target.#fields ??= splitTopLevel(target.#text));
  }

  static copy(from: object, to: object): void {
    if (#text in from) SourceText.attach(to, from.#text, from.#fields);
  }
}

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };

export interface JobPayload {
  class: string;
  args: JsonValue[];
  jid: string;
  queue: string;
  /** true (default 25 retries), false (no retry, no morgue) or a retry count (0 = straight to dead). */
  retry?: boolean | number;
  created_at?: number;
  enqueued_at?: number;
  /** Client side only: when to run. Removed before the job is added to `schedule`. */
  at?: number;
  retry_count?: number;
  error_message?: string;
  error_class?: string;
  failed_at?: number;
  retried_at?: number;
  error_backtrace?: string;
  retry_queue?: string;
  /** Seconds of retrying allowed after the first failure (Sidekiq >= 7.1.3). */
  retry_for?: number;
  backtrace?: boolean | number;
  dead?: boolean;
  tags?: string[];
  /** The real class when `class` is a wrapper (ActiveJob). */
  wrapped?: string;
  [field: string]: unknown;
}

/** Top-level fields holding epoch timestamps; written with a guaranteed fraction in seconds mode. */
export const TIMESTAMP_FIELDS: ReadonlySet<string> = new Set([
  "created_at",
  "enqueued_at",
  "at",
  "failed_at",
  "retried_at",
  "discarded_at",
]);

/** Random bytes drawn from the CSPRNG in one call per this many jids (a syscall per jid cost 6% of a push). */
const JID_POOL = 512;
let pool = Buffer.alloc(0);
let offset = 0;

/** 24 lowercase hex characters from a CSPRNG, like `SecureRandom.hex(12)`. */
export function newJid(): string {
  if (offset >= pool.length) {
    pool = randomBytes(12 * JID_POOL);
    offset = 0;
  }
  offset += 12;
  return pool.toString("hex", offset - 12, offset);
}

/**
 * Serializes a payload. Equivalent to JSON.stringify except that numeric timestamp fields keep a
 * fractional part (`1712345678.0`), so Sidekiq 8 readers do not take whole seconds for milliseconds,
 * and fields of a parsed payload that are unchanged keep their original text (see rawJson.ts).
 */
export function dumpPayload(job: JobPayload | Record<string, unknown>): string {
  const fields = SourceText.fields(job);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(job)) {
    if (value === undefined) continue;
    const raw = fields?.get(key);
    const encoded =
      raw !== undefined && sameAsRaw(value, raw)
        ? raw
        : TIMESTAMP_FIELDS.has(key) && typeof value === "number" && Number.isFinite(value)
          ? formatTimestampJson(value)
          : JSON.stringify(value);
    if (encoded === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * Parses a stored job. Throws InvalidPayloadError (naming what is wrong) when the text is not JSON or
 * lacks the fields every Sidekiq job has; the caller moves such a job to `dead` rather than crash.
 */
export function parsePayload(text: string): JobPayload {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidPayloadError(`job is not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidPayloadError("job is not a JSON object");
  }
  const job = value as Record<string, unknown>;
  if (typeof job.class !== "string" || job.class === "") {
    throw new InvalidPayloadError('job has no "class" string');
  }
  if (!Array.isArray(job.args)) throw new InvalidPayloadError('job "args" is not an array');
  if (typeof job.jid !== "string") throw new InvalidPayloadError('job has no "jid" string');
  if (typeof job.queue !== "string") job.queue = "default";
  SourceText.attach(job, text);
  return job as JobPayload;
}

/**
 * True for a payload parsed from stored text, or a copy of one (inheritSource): a job that was enqueued
 * before and is being pushed again (the poller's due jobs, a retry moved back by the API).
 */
export function wasStored(job: object): boolean {
  return SourceText.has(job);
}

/** Gives `copy` the source text of `original` (a parsed payload), so unchanged fields keep their text. */
export function inheritSource(original: object, copy: object): void {
  SourceText.copy(original, copy);
}

/** The class name to show and to measure: the wrapped class for ActiveJob wrappers. */
export function displayClass(job: Pick<JobPayload, "class" | "wrapped">): string {
  return typeof job.wrapped === "string" && job.wrapped !== "" ? job.wrapped : job.class;
}
