/**
 * Correlation ids, as GitLab's workers log them: a `correlation_id` field in the payload ties every log
 * line of a job, and of the jobs it enqueues, to the request or job that started the chain.
 *
 *   await withCorrelationId(request.headers["x-request-id"], () => ReportJob.performAsync(42));
 *
 * The client copies the current id (given by withCorrelationId, else that of the job being performed)
 * into every pushed payload that has none; the worker puts the payload's id on each line the job logs.
 * A push outside both gets no id: none is invented, so payloads stay as they were.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { currentJobContext, type JobLogContext } from "./logger.js";
import { displayClass, type JobPayload } from "../wire/payload.js";

const store = new AsyncLocalStorage<string>();

/** Runs `fn` with `id` as the correlation id of every job pushed inside it (and of their own pushes). */
export function withCorrelationId<T>(id: string, fn: () => T): T {
  if (typeof id !== "string" || id === "") throw new TypeError("withCorrelationId: the id must be a non-empty string");
  return store.run(id, fn);
}

/** The correlation id in force here: withCorrelationId's, else the running job's, else undefined. */
export function currentCorrelationId(): string | undefined {
  const id = store.getStore() ?? currentJobContext()?.correlation_id;
  return typeof id === "string" ? id : undefined;
}

/** Client side: gives a payload without a correlation_id the current one. */
export function addCorrelationId(job: JobPayload): void {
  if (job.correlation_id !== undefined) return;
  const id = currentCorrelationId();
  if (id !== undefined) job.correlation_id = id;
}

/** Worker side: the log context of a job, with its correlation_id when it has one. */
export function jobLogContext(job: JobPayload, queue: string): JobLogContext {
  const context: JobLogContext = { jid: job.jid, class: displayClass(job), queue };
  if (typeof job.correlation_id === "string" && job.correlation_id !== "") context.correlation_id = job.correlation_id;
  return context;
}
