/**
 * Which class a job was built from, for client middleware that reads class attributes (deduplication
 * reads `static idempotent`). A push by class reference carries its class on a hidden symbol property;
 * a push by name (the poller's re-push, `tsqctl push`, a retry from the API) is given one by its
 * client's `jobClasses` lookup (a worker's client looks in the worker's own registry), so two workers
 * in one process with different classes of the same name each find their own. A payload never chooses
 * code: names are only looked up among classes already loaded.
 */
import type { JobPayload } from "../wire/payload.js";

const CLASS = Symbol("tsq.jobClass");

/** Finds the class registered under a job's name (a worker's registry); undefined when none is. */
export type JobClassLookup = (name: string) => object | undefined;

/** Records the class of a job pushed by class reference (not serialized: a symbol property). */
export function attachJobClass(job: JobPayload, klass: unknown): void {
  if (typeof klass === "function") Object.defineProperty(job, CLASS, { value: klass, enumerable: false });
}

/** The class `job` was built from, or the one its client found by name; undefined if neither is known. */
export function jobClassOf(job: JobPayload): object | undefined {
  return (job as { [CLASS]?: object })[CLASS];
}
