/**
 * The run side of sidekiq-unique-jobs interop, acting on the payload alone (a job pushed by Ruby with
 * the gem runs here as one pushed by tsq), with the gem's semantics (v7/v8, `lock/*.rb`):
 *
 *   until_executing   released just before perform; taken again if perform throws (the retry holds it)
 *   until_executed    held by the job (taken now if it expired meanwhile), released after perform,
 *                     whether it succeeds or throws (the gem's `ensure`)
 *   until_expired     held by the job; never released: it ends at `lock_ttl`
 *   while_executing   the run lock `<digest>:RUN` is taken for the run (waiting up to `lock_timeout`
 *                     seconds) and released after it
 *
 * A lock that another job holds when this one is to run is a server-side conflict (conflict.ts).
 * A job abandoned by a hard shutdown is back in its queue with its jid: it keeps its push lock.
 */
import type { Client } from "../../../client/Client.js";
import { logger } from "../../../platform/logger.js";
import type { Next } from "../../../platform/Chain.js";
import type { JobPayload } from "../../../wire/payload.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { onServerConflict } from "./conflict.js";
import { releaseSujLock, takeLock, type SujLock, type TakeResult } from "./Locksmith.js";
import { strategyOf } from "./policy.js";
import { lockOf, lockTimeoutOf } from "./settings.js";

/** Milliseconds between tries while a while_executing job waits for its run lock. */
const WAIT_STEP_MS = 100;

export class SujServerMiddleware {
  constructor(
    private readonly redis: TsqRedis,
    private readonly client: Client,
  ) {}

  /** Not async for a job this does not concern: an async wrapper costs every job promises. */
  call(instance: object, job: JobPayload, _queue: string, next: Next): Promise<void> {
    const lock = lockOf(job);
    if (lock === undefined) return next();
    return this.locked(instance, job, _queue, next, lock);
  }

  private async locked(instance: object, job: JobPayload, _queue: string, next: Next, lock: SujLock): Promise<void> {
    const signal = (instance as { signal?: AbortSignal }).signal;
    if (lock.type === "until_executing") {
      await releaseSujLock(this.redis, lock);
      try {
        return await next();
      } catch (error) {
        await takeLock(this.redis, lock).catch(() => undefined); // the retry keeps others out, as the gem's re-lock
        throw error;
      }
    }
    const taken =
      lock.type === "while_executing"
        ? await this.waitFor(lock, lockTimeoutOf(job), signal)
        : await takeLock(this.redis, lock);
    if (!taken.taken)
      return onServerConflict(this.redis, this.client, job, taken.holder, strategyOf(job.on_conflict, "server"));
    if (lock.type === "until_expired") return next();
    try {
      await next();
    } finally {
      // A run lock always goes; a push lock stays with a job requeued by a hard shutdown.
      if (lock.type === "while_executing" || signal?.aborted !== true)
        await releaseSujLock(this.redis, lock).catch((error: unknown) =>
          logger().warn({ err: error, lock_digest: lock.digest }, "could not release a sidekiq-unique-jobs lock"),
        );
    }
  }

  /** Takes the run lock, trying again for up to `seconds` (0: once). */
  private async waitFor(lock: SujLock, seconds: number, signal: AbortSignal | undefined): Promise<TakeResult> {
    const deadline = performance.now() + seconds * 1000;
    for (;;) {
      const result = await takeLock(this.redis, lock);
      if (result.taken || performance.now() + WAIT_STEP_MS > deadline || signal?.aborted === true) return result;
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }
}
