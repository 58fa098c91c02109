/**
 * Runs one held job in this process, as a worker would but without Redis: for tsq/testing's inline mode
 * and `drain()`. The payload is read back from its JSON (so perform sees exactly what a worker would),
 * compressed args are inflated, the instance is built by the job factory (default `new Class()`), and
 * the app's server middleware (`configureServer`) wraps `perform`. Plug-ins' run-side hooks (locks,
 * batches, kill switches) keep their state in Redis and are not run here: use `startTestWorker` for them.
 */
import { UnknownJobError } from "../wire/errors.js";
import { parsePayload, type JobPayload } from "../wire/payload.js";
import { isCompressed, unpackArgs } from "../client/compression/expand.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import type { Chain } from "../platform/Chain.js";
import type { JobFactory, ServerMiddlewareArgs } from "../server/context.js";
import { isRunnable, type JobInstance } from "../server/Registry.js";

/** A job pushed in fake or inline mode: its stored JSON, its `at` (epoch seconds) if scheduled, its class. */
export interface HeldJob {
  readonly json: string;
  readonly at: number | undefined;
  /** The class it was pushed with, or the registered class of its name; undefined when neither is known. */
  readonly klass: object | undefined;
}

/** The payload as `HardJob.jobs` shows it: as stored, plus `at` for a scheduled job. */
export function payloadOf(held: HeldJob): JobPayload {
  const job = parsePayload(held.json);
  if (held.at !== undefined) job.at = held.at;
  return job;
}

export async function runJob(
  held: HeldJob,
  middleware: Chain<ServerMiddlewareArgs>,
  jobFactory: JobFactory | undefined,
): Promise<void> {
  const job = parsePayload(held.json);
  const klass = held.klass;
  if (!isRunnable(klass))
    throw new UnknownJobError(
      `tsq/testing cannot run ${job.class} (jid ${job.jid}): it was pushed by name and no class of that name ` +
        "is loaded; push it by class (HardJob.performAsync) or load the class in this process first",
    );
  if (isCompressed(job)) await unpackArgs(job, DEFAULTS.maxInflatedBytes);
  const instance: JobInstance = jobFactory ? jobFactory(klass) : new klass();
  Object.assign(instance, { jid: job.jid, payload: job });
  if (typeof job.version === "number") Object.assign(instance, { jobVersion: job.version });
  await middleware.invoke([instance, job, job.queue], async () => {
    await instance.perform(...job.args);
  });
}
