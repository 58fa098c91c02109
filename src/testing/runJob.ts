/**
 * Runs one held job in this process, as a worker would but without Redis: for tsq/testing's inline mode
 * and `drain()`. The payload is read back from its JSON (so perform sees exactly what a worker would),
 * compressed args are inflated, the instance is built by the job factory (default `new Class()`), and
 * the app's server middleware (`configureServer`) wraps `perform`. `this.progress` is recorded for the
 * test (progressOf), and a durable job's sleep or wait ends the execution as in a worker (its journal is
 * in the controller's memory: features/durable/memory.ts). Plug-ins' run-side hooks (locks, batches,
 * kill switches) keep their state in Redis and are not run here: use `startTestWorker` for them.
 */
import { UnknownJobError } from "../wire/errors.js";
import { parsePayload, type JobPayload } from "../wire/payload.js";
import { isCompressed, unpackArgs } from "../client/compression/expand.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import type { Chain } from "../platform/Chain.js";
import type { JobFactory, ServerMiddlewareArgs } from "../server/context.js";
import { isRunnable, type JobInstance } from "../server/Registry.js";
import { checkedProgress } from "../features/outcomes/ProgressReporter.js";
import { Suspended } from "../features/durable/errors.js";

/** One `this.progress(n, data)` call, as a worker would show it (`at`: epoch seconds). */
export interface ProgressReport {
  n: number;
  data?: unknown;
  at: number;
}

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
  onProgress: (jid: string, report: ProgressReport) => void,
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
  // What the outcomes plug-in gives a job in a worker, recorded instead of written to the work entry.
  const progress = (n: number, data?: unknown): void => onProgress(job.jid, checkedProgress(n, data));
  Object.assign(instance, { progress });
  await middleware.invoke([instance, job, job.queue], async () => {
    try {
      await instance.perform(...job.args);
    } catch (error) {
      // A durable job's sleep or wait ended this execution, as the durable plug-in's aroundPerform
      // turns it into a normal end in a worker; signal() hands a parked job back (durable/memory.ts).
      if (!(error instanceof Suspended)) throw error;
    }
  });
}
