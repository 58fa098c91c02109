/**
 * The gate of classes' `static limit` (keyedPolicy.ts), first in the server chain, so a parked job has
 * not started for any other middleware (it keeps its dedup or unique lock) and no middleware can skip
 * the give-back:
 *
 *   admitted   the job runs; with a concurrency its lease is given back on every way out, handing it to
 *              the key's oldest parked job in the same Lua step
 *   no room    the job is parked on its key (`limit_parked` counts how often, normally 0 or 1), and the
 *              processor acknowledges it like a finished job: no retry, no reschedule, no worker waiting
 *   list full  ConcurrencyLimitFullError: the job goes through retries, loudly
 *
 * A class without a limit costs one cached property read and no Redis call.
 */
import { ConcurrencyLimitFullError } from "../gitlab-concurrency-limits/errors.js";
import type { Next } from "../../../platform/Chain.js";
import { displayClass, dumpPayload, type JobPayload } from "../../../wire/payload.js";
import type { ServerContext } from "../../../server/context.js";
import type { KeyedLimiter } from "./KeyedLimiter.js";
import { keyedLimitOf, limitKeyOf, type KeyedLimitPolicy } from "./keyedPolicy.js";
import { maxParked } from "../gitlab-concurrency-limits/settings.js";

export class KeyedLimitServerMiddleware {
  constructor(
    private readonly limiter: KeyedLimiter,
    private readonly ctx: Pick<ServerContext, "logger" | "events" | "options">,
  ) {}

  /** Not async for a job this does not concern: an async wrapper costs every job promises. */
  call(instance: object, job: JobPayload, queue: string, next: Next): Promise<void> {
    const policy = keyedLimitOf(instance.constructor);
    if (policy === undefined) return next();
    return this.limited(instance, job, queue, next, policy);
  }

  private async limited(
    instance: object,
    job: JobPayload,
    queue: string,
    next: Next,
    policy: KeyedLimitPolicy,
  ): Promise<void> {
    const name = displayClass(job);
    const key = limitKeyOf(policy, name, job.args);
    const parked = dumpPayload({
      ...job,
      limit_parked: (typeof job.limit_parked === "number" ? job.limit_parked : 0) + 1,
    });
    const result = await this.limiter.enter(name, key, policy, job.jid, parked);
    if (result === "run") {
      try {
        await next();
      } finally {
        // A job abandoned by a hard shutdown was requeued with its jid: its copy takes the lease over (it
        // is "mine" to the gate), so giving it back now could let one more in while the copy runs.
        if (policy.concurrency > 0 && (instance as { signal?: AbortSignal }).signal?.aborted === true)
          this.limiter.forget(job.jid);
        // Sent, not awaited (commands on a connection keep their order); if it fails the lease expires.
        else if (policy.concurrency > 0)
          this.limiter
            .leave(name, key, policy, job.jid)
            .catch((error: unknown) =>
              this.ctx.logger.warn({ err: error }, "could not give back a keyed-limit lease; it expires by itself"),
            );
      }
      return;
    }
    this.ctx.events.emit("rateLimited", job, queue, result);
    if (result === "parked") {
      this.ctx.logger.debug(
        { job_status: "limit_parked", limit_key: key },
        `parked: ${name} key ${key} is at its limit`,
      );
      return;
    }
    throw new ConcurrencyLimitFullError(
      `${name}: ${maxParked.read(this.ctx.options)} jobs are already parked on limit key ${key}; ` +
        "the job goes to the retry set. Raise the class's limit, add capacity, or raise concurrency_limit_max_parked",
    );
  }
}
