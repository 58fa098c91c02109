/**
 * Which class a job was built from, for client middleware that reads class attributes (deduplication
 * reads `static idempotent`). A push by class reference carries its class on a hidden symbol property;
 * a push by name (the poller's re-push, `tsqctl push`, a retry from the API) finds it among the classes
 * this process registered (the worker's job module). A payload never chooses code: names are only looked
 * up among classes already loaded.
 */
import type { JobPayload } from "../wire/payload.js";

const CLASS = Symbol("tsq.jobClass");
const byName = new Map<string, object>();

/** Makes `klass` findable by `name` (called by the worker's Registry). */
export function rememberJobClass(name: string, klass: object): void {
  byName.set(name, klass);
}

/** Records the class of a job pushed by class reference (not serialized: a symbol property). */
export function attachJobClass(job: JobPayload, klass: unknown): void {
  if (typeof klass === "function") Object.defineProperty(job, CLASS, { value: klass, enumerable: false });
}

/** The class `job` was built from, or the registered class of that name; undefined if neither is known. */
export function jobClassOf(job: JobPayload): object | undefined {
  return (job as { [CLASS]?: object })[CLASS] ?? byName.get(job.class);
}
