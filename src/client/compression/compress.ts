/**
 * The client half of GitLab's size limiter in compress mode (`Gitlab::SidekiqMiddleware::SizeLimiter`:
 * Validator + Compressor). Args whose JSON is over the threshold become ONE base64 string of the
 * zlib-deflated JSON of the args array, and the payload says so:
 *
 *   before  {"class":"ImportJob","args":[{"rows":[…300 KB…]}],"jid":"…",…}
 *   after   {"class":"ImportJob","args":["eJzsvQt…"],"jid":"…",…,"compressed":true,"original_job_size_bytes":307245}
 *
 * A job still over `maxPayloadBytes` after that is refused at push (GitLab raises ExceedLimitError):
 * Redis is a queue, not a blob store.
 */
import { deflateSync } from "node:zlib";
import { PayloadTooLargeError } from "../../wire/errors.js";
import { dumpPayload, type JobPayload } from "../../wire/payload.js";
import { formatBytes, type SizeLimits } from "./settings.js";

/** The payload fields GitLab's Compressor writes. */
export const COMPRESSED = "compressed";
export const ORIGINAL_SIZE = "original_job_size_bytes";

/**
 * Returns the JSON to store for `stored` (already serialized as `json`), compressing its args when they
 * are over the threshold; throws PayloadTooLargeError, naming the class and sizes, when it stays too big.
 * Cost for a job under the threshold: one comparison, as the whole payload bounds its args' size.
 */
export function limitPayloadSize(
  job: Pick<JobPayload, "class" | "jid">,
  stored: Record<string, unknown>,
  json: string,
  limits: SizeLimits,
): string {
  let bytes = Buffer.byteLength(json);
  let argsBytes: number | undefined;
  const threshold = limits.compressThresholdBytes;
  // A payload already compressed (a retry pushed again, a job re-pushed by tsqctl) is not compressed twice.
  if (threshold > 0 && bytes > threshold && stored[COMPRESSED] !== true) {
    const argsJson = JSON.stringify(stored.args);
    const size = Buffer.byteLength(argsJson);
    if (size > threshold) {
      if (size > limits.maxInflatedBytes) {
        throw new PayloadTooLargeError(
          `job ${job.class} (jid ${job.jid}) has ${formatBytes(size)} of args, over the ${formatBytes(limits.maxInflatedBytes)} ` +
            "a worker will inflate (maxInflatedBytes); store large data elsewhere and pass a reference such as an id or URL",
        );
      }
      // zlib's default level: any level inflates the same, and 9 costs twice the time for a few % less.
      stored.args = [deflateSync(argsJson).toString("base64")];
      stored[COMPRESSED] = true;
      stored[ORIGINAL_SIZE] = size;
      argsBytes = size;
      json = dumpPayload(stored);
      bytes = Buffer.byteLength(json);
    }
  }
  if (bytes > limits.maxPayloadBytes) throw tooLarge(job, bytes, argsBytes, limits.maxPayloadBytes);
  return json;
}

function tooLarge(
  job: Pick<JobPayload, "class" | "jid">,
  bytes: number,
  argsBytes: number | undefined,
  limit: number,
): PayloadTooLargeError {
  const size =
    argsBytes === undefined
      ? formatBytes(bytes)
      : `${formatBytes(bytes)} after compressing its ${formatBytes(argsBytes)} of args`;
  return new PayloadTooLargeError(
    `job ${job.class} (jid ${job.jid}) is ${size}, over the limit of ${formatBytes(limit)} (maxPayloadBytes); ` +
      "store large data elsewhere and pass a reference such as an id or URL (a database row, an object storage key)",
  );
}
