/**
 * Applies a kill switch to a fetched job before it starts, as GitLab's `SkipJobs` server middleware:
 *
 *   defer  the job is stored again in `schedule`, `delay` seconds ahead, same jid, with
 *          `deferred: true`, `deferred_by: "kill_switch"` and `deferred_count` + 1, then acknowledged
 *   drop   the job is acknowledged without running, with a log line naming its jid; the locks it held
 *          (deduplication, unique) are released
 *
 * Written back before the acknowledgement: a crash in between runs or defers the job twice rather than
 * losing it. Each outcome is counted (`switched` event → tsq_jobs_deferred_total / tsq_jobs_dropped_total).
 */
import { SCHEDULE } from "../../../wire/keys.js";
import { dumpPayload, type JobPayload } from "../../../wire/payload.js";
import { formatSeconds, nowSeconds } from "../../../wire/timestamps.js";
import type { ServerContext } from "../../../server/context.js";
import type { UnitOfWork } from "../../../server/fetch/unitOfWork.js";
import type { SwitchBoard } from "./SwitchBoard.js";
import type { KillSwitch } from "./switches.js";

/** GitLab's `deferred_by` names the source (`feature_flag`, `database_health_check`); ours is tsqctl's switch. */
export const DEFERRED_BY = "kill_switch";

type SwitchContext = Pick<ServerContext, "redis" | "logger" | "events" | "options" | "locks">;

/**
 * True when a switch took the job (it must not run); false at once, without a promise, when the cached
 * switches are fresh and none applies: the per-job cost. `board`: the worker's (plugin.ts makes one per
 * worker, shared by all its job slots).
 */
export function interceptJob(
  ctx: SwitchContext,
  board: SwitchBoard,
  job: JobPayload,
  unit: UnitOfWork,
): boolean | Promise<boolean> {
  const found = board.lookup(job.class, typeof job.wrapped === "string" ? job.wrapped : undefined);
  if (found === undefined) return false;
  if (found instanceof Promise) return found.then((on) => (on ? apply(ctx, job, unit, on) : false));
  return apply(ctx, job, unit, found);
}

async function apply(ctx: SwitchContext, job: JobPayload, unit: UnitOfWork, on: KillSwitch): Promise<true> {
  if (on.action === "drop") {
    await unit.acknowledge();
    await ctx.locks.release([job]); // it will not run: the locks it held (every plug-in's kinds) go
    ctx.logger.warn(
      { jid: job.jid, job_status: "dropped", dropped_by: DEFERRED_BY },
      `job ${job.jid} dropped by a kill switch; 'tsqctl resume <class>' lets this class run again`,
    );
    ctx.events.emit("switched", job, unit.queue, "dropped");
    return true;
  }
  const count = (typeof job.deferred_count === "number" ? job.deferred_count : 0) + 1;
  job.deferred = true;
  job.deferred_by = DEFERRED_BY;
  job.deferred_count = count;
  await ctx.redis.zadd(SCHEDULE, formatSeconds(nowSeconds() + on.delay), dumpPayload(job));
  await unit.acknowledge();
  ctx.logger.info(
    { jid: job.jid, job_status: "deferred", job_deferred_by: DEFERRED_BY, deferred_count: count, delay_s: on.delay },
    `job ${job.jid} deferred by a kill switch for ${on.delay} s`,
  );
  ctx.events.emit("switched", job, unit.queue, "deferred");
  return true;
}
