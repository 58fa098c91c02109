/**
 * The worker half of GitLab's size limiter (`Compressor.decompress`): a payload with `compressed: true`
 * has its args inflated before perform. Everything about such a payload is hostile until checked: args
 * must be ONE strict base64 string, the zlib stream must inflate to at most `maxInflatedBytes` (a 5 MB
 * zip bomb would otherwise inflate to gigabytes), and the result must be a JSON array. Anything else is a
 * PayloadDecompressionError: the job fails like any other (retry, then dead), its stored bytes untouched.
 */
import { createInflate, inflate, inflateSync } from "node:zlib";
import { promisify } from "node:util";
import { PayloadDecompressionError } from "../../wire/errors.js";
import type { JobPayload, JsonValue } from "../../wire/payload.js";
import { COMPRESSED, ORIGINAL_SIZE } from "./compress.js";
import { formatBytes } from "./settings.js";

const inflateAsync = promisify(inflate);
/** Strict base64 (Ruby's `strict_decode64`): Node's decoder silently skips junk characters. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What `unpackArgs` took out of a payload, for `repackArgs` to put back. */
export interface PackedArgs {
  readonly args: JsonValue[];
  readonly originalSize: unknown;
}

/** True when the payload says its args are compressed. One property read: the per-job cost. */
export function isCompressed(job: Readonly<Record<string, unknown>>): boolean {
  return job[COMPRESSED] === true;
}

/**
 * Replaces the compressed args of `job` with the inflated ones and removes the two marker fields, as
 * GitLab does before its server middleware runs. Returns what was removed: a failed job is stored
 * compressed again (`repackArgs`), since tsq's poller moves retries back to a queue without a client.
 */
export async function unpackArgs(job: JobPayload, maxInflatedBytes: number): Promise<PackedArgs> {
  const zipped = compressedBytes(job);
  let inflated: Buffer;
  try {
    inflated = await inflateAsync(zipped, { maxOutputLength: maxInflatedBytes });
  } catch (error) {
    throw inflateError(job, error, maxInflatedBytes);
  }
  const packed: PackedArgs = { args: job.args, originalSize: job[ORIGINAL_SIZE] };
  job.args = parseArgs(job, inflated);
  delete job[COMPRESSED];
  delete job[ORIGINAL_SIZE];
  return packed;
}

/** Puts the compressed args and markers back, so the job is stored as it came. */
export function repackArgs(job: JobPayload, packed: PackedArgs): void {
  job.args = packed.args;
  job[COMPRESSED] = true;
  if (packed.originalSize !== undefined) job[ORIGINAL_SIZE] = packed.originalSize;
}

/**
 * The args to show for a stored payload (tsqctl, the admin API): inflated when compressed; the stored
 * args when they cannot be inflated, so a broken job can still be listed and deleted.
 */
export function displayArgs(item: Readonly<Record<string, unknown>>, maxInflatedBytes: number): unknown[] {
  const stored = Array.isArray(item.args) ? (item.args as unknown[]) : [];
  if (!isCompressed(item)) return stored;
  const job = item as JobPayload;
  try {
    const inflated = inflateSync(compressedBytes(job), { maxOutputLength: maxInflatedBytes });
    return parseArgs(job, inflated);
  } catch {
    return stored;
  }
}

/**
 * Bytes of the compressed args as stored (their base64 decoded), read without inflating anything: what a
 * list shows instead of the args, since three rows inflating to 90 MB each would cost seconds and GBs.
 */
export function compressedArgsBytes(item: Readonly<Record<string, unknown>>): number {
  const args = item.args;
  const text = Array.isArray(args) && typeof args[0] === "string" ? args[0] : "";
  return Math.floor((text.length * 3) / 4) - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0);
}

/** The start of a job's inflated args: at most `capBytes` of text, and whether it was cut there. */
export interface InflatedHead {
  readonly text: string;
  readonly cut: boolean;
}

/**
 * Inflates at most `capBytes` of a job's compressed args, for a page that shows one job. A stream, not
 * `inflateSync`: the work is done in 16 KB steps off the event loop and stops as soon as the cap is
 * passed, so a bomb costs about `capBytes` of output, not the gigabytes it would inflate to. Rejects
 * with a PayloadDecompressionError when the args are not GitLab's format or not a zlib stream.
 */
export function inflateHead(item: Readonly<Record<string, unknown>>, capBytes: number): Promise<InflatedHead> {
  const job = item as JobPayload;
  const zipped = compressedBytes(job);
  return new Promise((resolve, reject) => {
    const stream = createInflate();
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (cut: boolean) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      resolve({ text: Buffer.concat(chunks).subarray(0, capBytes).toString("utf8"), cut });
    };
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size > capBytes) finish(true);
    });
    stream.on("end", () => finish(false));
    stream.on("error", (error) => {
      if (settled) return;
      settled = true;
      reject(inflateError(job, error, capBytes));
    });
    stream.end(zipped);
  });
}

function compressedBytes(job: JobPayload): Buffer {
  const args: unknown = job.args;
  if (!Array.isArray(args) || args.length !== 1 || typeof args[0] !== "string") {
    throw new PayloadDecompressionError(
      `job ${job.class} (jid ${job.jid}) says compressed: true but its args are not one base64 string ` +
        "(GitLab's format); it was not run. Fix or delete it with tsqctl",
    );
  }
  const text = args[0];
  if (!BASE64.test(text)) {
    throw new PayloadDecompressionError(
      `job ${job.class} (jid ${job.jid}) says compressed: true but its args are not valid base64 ` +
        `(${text.length} characters); it was not run. Fix or delete it with tsqctl`,
    );
  }
  return Buffer.from(text, "base64");
}

function inflateError(job: JobPayload, error: unknown, cap: number): PayloadDecompressionError {
  const tooBig = error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
  const why = tooBig
    ? `inflate to more than ${formatBytes(cap)} (maxInflatedBytes; raise it if such jobs are legitimate)`
    : `are not a zlib stream (${(error as Error).message})`;
  return new PayloadDecompressionError(
    `job ${job.class} (jid ${job.jid}) says compressed: true but its args ${why}; it was not run`,
    { cause: error },
  );
}

function parseArgs(job: JobPayload, inflated: Buffer): JsonValue[] {
  let value: unknown;
  try {
    value = JSON.parse(inflated.toString("utf8"));
  } catch (error) {
    throw new PayloadDecompressionError(
      `job ${job.class} (jid ${job.jid}): its compressed args inflate to text that is not JSON ` +
        `(${(error as Error).message}); it was not run`,
    );
  }
  if (!Array.isArray(value)) {
    throw new PayloadDecompressionError(
      `job ${job.class} (jid ${job.jid}): its compressed args inflate to JSON that is not an array; it was not run`,
    );
  }
  return value as JsonValue[];
}
