/**
 * The bound concurrency limits and the keyed rate limits share (both park jobs per class or key),
 * declared here rather than in the core's defaults; both plug-ins list it.
 */
import { defineSetting } from "../../../platform/config/settings.js";

declare module "../../../platform/config/options.js" {
  interface WorkerOptions {
    /**
     * Most jobs one concurrency-limited class (or rate-limit key) may have parked, waiting for a slot.
     * Config `concurrency_limit_max_parked`; default 10,000. See docs/concurrency-limits.md.
     */
    concurrencyLimitMaxParked?: number;
  }
}

/**
 * Most jobs one concurrency-limited class may have parked, waiting for a slot (10,000). A job that
 * would park past it fails with ConcurrencyLimitFullError and goes through retries instead, so a
 * sustained overload shows up in the retry set rather than growing Redis without bound. Slots of a
 * dead process expire after `heartbeatTtl`. At most 10,000,000: a parked list that long is an outage.
 */
export const maxParked = defineSetting({
  key: "concurrencyLimitMaxParked",
  default: 10_000,
  min: 1,
  max: 10_000_000,
  integer: true,
  unit: "jobs",
});
