/**
 * The push side of sidekiq-unique-jobs interop, installed in every Client (src/client/Client.ts):
 *
 *   - a job without a `lock` field: untouched, no Redis call;
 *   - the gem's payload fields are added (settings.ts), so a Ruby worker running the gem treats the job
 *     as its own pushes;
 *   - until_executing, until_executed, until_expired take the lock for the job's jid at push
 *     (suj-lock-7.lua), where a Ruby client with the gem takes it too; while_executing locks only while
 *     running (ServerMiddleware.ts);
 *   - the same jid taking it again (the poller's re-push) is not a duplicate (flow-control.md §1.5);
 *   - a lock held by another jid — a tsq job or a Ruby one — is a conflict: `on_conflict` decides
 *     (conflict.ts); a dropped push resolves to null.
 */
import type { ClientMiddlewareArgs } from "../../../client/Client.js";
import type { Next } from "../../../platform/Chain.js";
import { onClientConflict } from "./conflict.js";
import { takeLock } from "./Locksmith.js";
import { strategyOf } from "./policy.js";
import { lockOf, prepareLock } from "./settings.js";

export async function sujOnPush(
  _className: ClientMiddlewareArgs[0],
  job: ClientMiddlewareArgs[1],
  _queue: ClientMiddlewareArgs[2],
  redis: ClientMiddlewareArgs[3],
  next: Next,
): Promise<void> {
  if (job.lock === undefined || job.lock === null || job.lock === false) return next();
  const type = prepareLock(job);
  const lock = lockOf(job);
  if (type === undefined || type === "while_executing" || lock === undefined) return next();
  const result = await takeLock(redis, lock);
  if (result.taken) return next();
  await onClientConflict(redis, job, lock, result.holder, strategyOf(job.on_conflict, "client"), next);
}
