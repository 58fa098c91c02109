/**
 * A push item made into a job payload: checked field by field (every mistake named, with its class)
 * and given Sidekiq's defaults, a jid and `created_at`. Plug-ins stamp their own fields afterwards
 * (expiry, batch membership, correlation id: their `stamp` hooks, client/plugin.ts).
 */
import { ArgumentError } from "../wire/errors.js";
import { inheritSource, newJid, type JobPayload } from "../wire/payload.js";
import { nowStamp, type TimestampFormat } from "../wire/timestamps.js";
import { attributeFields, type WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import { attachJobClass } from "./jobClasses.js";
import type { JobOptionKeys } from "./jobOptionKeys.js";
import { jobNameOf, wireOptions, type JobClassLike } from "./options.js";
import type { PushItem } from "./options.js";

const JOB_DEFAULTS = { retry: true, queue: "default" } as const;
/** Sidekiq treats intervals below this as relative seconds, above as epoch seconds. */
export const EPOCH_THRESHOLD = 1_000_000_000;

/** Validates a push item and fills in Sidekiq's defaults (`normalize_item`). */
export function normalizeItem(
  item: PushItem,
  router: WorkerRouter,
  format: TimestampFormat,
  optionKeys: JobOptionKeys,
): JobPayload {
  if (item === null || typeof item !== "object") throw new ArgumentError("push: expected a job object");
  const { class: klass, ...given } = item;
  // A field set to undefined (`{ queue: opts.queue }`) means "not given", as it would in JSON.
  const fields = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  if (typeof klass !== "string" && typeof klass !== "function") {
    throw new ArgumentError('push: "class" must be a class name or a job class');
  }
  const className = jobNameOf(klass);
  if (className === "") throw new ArgumentError('push: "class" must not be empty');
  if (!Array.isArray(fields.args)) throw new ArgumentError(`push: args for ${className} must be an array`);
  const options = typeof klass === "string" ? undefined : (klass as JobClassLike).options;
  const typo = optionKeys.typo(className, options, "static options");
  if (typo) throw new ArgumentError(typo);
  const classOptions = wireOptions(options);
  // Worker attributes (routed queue, job version) sit below the class's options and the push's fields.
  const attributes = attributeFields(klass, router);
  const job = { class: className, ...JOB_DEFAULTS, ...attributes, ...classOptions, ...fields } as JobPayload;
  job.class = className;
  inheritSource(item, job);
  attachJobClass(job, klass);

  if (typeof job.queue !== "string" || job.queue === "")
    throw new ArgumentError(`push: queue for ${className} must be a non-empty string`);
  if (job.at !== undefined && (typeof job.at !== "number" || !Number.isFinite(job.at))) {
    throw new ArgumentError(`push: at for ${className} must be epoch seconds (a finite number)`);
  }
  if (job.tags !== undefined && !Array.isArray(job.tags))
    throw new ArgumentError(`push: tags for ${className} must be an array`);
  if (job.retry !== undefined && typeof job.retry !== "boolean" && !(Number.isInteger(job.retry) && job.retry >= 0)) {
    throw new ArgumentError(`push: retry for ${className} must be true, false or a retry count >= 0`);
  }
  if (
    job.retry_for !== undefined &&
    !(typeof job.retry_for === "number" && job.retry_for >= 0 && job.retry_for < EPOCH_THRESHOLD)
  ) {
    throw new ArgumentError(`push: retry_for for ${className} must be relative seconds (0 to 1e9)`);
  }
  if (job.jid === undefined) job.jid = newJid();
  else if (typeof job.jid !== "string" || job.jid === "")
    throw new ArgumentError("push: jid must be a non-empty string");
  if (job.created_at === undefined) job.created_at = nowStamp(format);
  return job;
}
