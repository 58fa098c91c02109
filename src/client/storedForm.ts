/**
 * The form a job is stored in, as Sidekiq's `Client#push` writes it: an immediate job gets `enqueued_at`
 * now (microseconds before the write); a scheduled one drops `at`, which becomes its `schedule` score
 * (Sidekiq 8 also drops `enqueued_at`). Big args are compressed as GitLab does; a job still too big is
 * refused (compression/compress.ts).
 */
import { dumpPayload, type JobPayload } from "../wire/payload.js";
import { nowStamp, type TimestampFormat } from "../wire/timestamps.js";
import { limitPayloadSize } from "./compression/compress.js";
import type { SizeLimits } from "./compression/settings.js";

/** The JSON to write for `job`; stamps `enqueued_at` on `job` itself when it is immediate. */
export function storedJson(job: JobPayload, format: TimestampFormat, limits: SizeLimits): string {
  let stored: Record<string, unknown> = job;
  if (job.at === undefined) {
    job.enqueued_at = nowStamp(format);
  } else {
    const { at: _at, ...rest } = job;
    if (format === "milliseconds") delete rest.enqueued_at;
    stored = rest;
  }
  return limitPayloadSize(job, stored, dumpPayload(stored), limits);
}
