/**
 * Poller: moves due jobs from `retry` and `schedule` to their queues, as Sidekiq's `Scheduled::Poller`.
 *
 * - Moves due jobs to their queues 1,000 at a time with enqueue-due-2.lua (atomic: a job is never out
 *   of Redis between the set and its queue), resetting `enqueued_at`. With client middleware
 *   configured, it pops one job at a time (zpopbyscore-1.lua) and re-pushes it through the client,
 *   as Sidekiq does, so the middleware runs again.
 * - Waits 10 + rand*5 s before its first poll (only rand*5 with a fixed `pollIntervalAverage`), then
 *   prunes dead processes from `processes` once.
 * - Sleeps a random interval scaled by the number of live processes, so the whole cluster polls on
 *   average every `averageScheduledPollInterval` seconds: interval = count * 5 s; sleep
 *   interval*rand + interval/2 below 10 processes, interval*rand*2 from 10 up (Sidekiq 8.x).
 * - Polls early when a due time this process was told of comes (DueAlarms: durable sleeps and waits).
 */
import { POLLED_SETS, PROCESSES, PROCESS_CLEANUP } from "../wire/keys.js";
import { parsePayload } from "../wire/payload.js";
import { formatSeconds } from "../wire/timestamps.js";
import { EnqueueError } from "../wire/errors.js";
import { ProblemLog } from "../platform/redis/errors.js";
import type { ServerContext } from "./context.js";
import { sendToMorgue } from "./morgue.js";
import { enqueueDue } from "./enqueueDue.js";
import { zpopbyscoreLua } from "./scripts.js";

/** Due jobs moved per Lua call: big enough for 100,000 in a second or two, small enough not to stall Redis. */
const BATCH = 1000;

/** Seconds before the first poll, so a fleet restarting together does not poll in lockstep. */
const INITIAL_WAIT = 10;

export class Poller {
  private readonly stopController = new AbortController();
  private loop: Promise<void> | undefined;

  private readonly problems: ProblemLog;

  constructor(private readonly ctx: ServerContext) {
    this.problems = new ProblemLog("scheduled poll", ctx.logger);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Idempotent; wakes the sleeping poller at once. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
  }

  /** Enqueues every due job of `retry` and `schedule`. Returns how many moved. */
  async enqueueDue(): Promise<number> {
    let moved = 0;
    for (const set of POLLED_SETS) {
      // With client middleware configured, every job must pass through it, as Sidekiq re-pushes them.
      // Lock plug-ins' middleware (deduplication, unique jobs) only concerns jobs naming a lock
      // (`idempotency_key`, `tsq_unique_key`), which enqueue-due-2.lua hands back for the client path.
      const oneByOne = this.ctx.client.replaysScheduled;
      moved += oneByOne ? await this.enqueueOneByOne(set) : await this.enqueueInBatches(set);
    }
    return moved;
  }

  /** enqueue-due-2.lua: BATCH jobs per call, moved atomically from the set to their queues. */
  private async enqueueInBatches(set: string): Promise<number> {
    let moved = 0;
    while (!this.stopController.signal.aborted) {
      const now = this.ctx.clock.now();
      const enqueuedAt = this.ctx.timestampFormat === "milliseconds" ? String(now) : formatSeconds(now / 1000);
      const { moved: count, forClient } = await enqueueDue(this.ctx.redis, {
        set,
        nowSeconds: formatSeconds(now / 1000),
        limit: BATCH,
        enqueuedAt,
      });
      for (const json of forClient) await this.push(json, set);
      moved += count + forClient.length;
      if (count + forClient.length < BATCH) break;
    }
    return moved;
  }

  /** zpopbyscore-1.lua, one job at a time, each pushed through the client (and its middleware). */
  private async enqueueOneByOne(set: string): Promise<number> {
    let moved = 0;
    while (!this.stopController.signal.aborted) {
      const json = await zpopbyscoreLua.run(this.ctx.redis, set, formatSeconds(this.nowSeconds()));
      if (json === null) break;
      await this.push(json, set);
      moved++;
    }
    return moved;
  }

  /** Removes identities whose heartbeat hash has expired, at most once a minute cluster-wide. */
  async cleanupProcesses(): Promise<number> {
    const { redis } = this.ctx;
    const locked = await redis.set(PROCESS_CLEANUP, "1", "EX", 60, "NX");
    if (locked !== "OK") return 0;
    const identities = await redis.smembers(PROCESSES);
    if (identities.length === 0) return 0;
    const pipeline = redis.pipeline();
    for (const id of identities) pipeline.hget(id, "info");
    const infos = (await pipeline.exec()) ?? [];
    const dead = identities.filter((_, i) => infos[i]?.[1] === null);
    if (dead.length > 0) await redis.srem(PROCESSES, ...dead);
    return dead.length;
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    const { options } = this.ctx;
    const initial = (options.pollIntervalAverage === null ? INITIAL_WAIT : 0) + Math.random() * 5;
    await this.ctx.alarms.sleep(initial * 1000, signal);
    if (signal.aborted) return;
    await this.guard(() => this.cleanupProcesses());
    while (!signal.aborted) {
      await this.guard(() => this.enqueueDue());
      await this.ctx.alarms.sleep((await this.randomInterval()) * 1000, signal);
    }
    this.ctx.alarms.clear();
  }

  private async randomInterval(): Promise<number> {
    const { options } = this.ctx;
    if (options.pollIntervalAverage !== null) {
      const interval = options.pollIntervalAverage;
      return interval * Math.random() + interval / 2;
    }
    let count = 1;
    try {
      count = Math.max(await this.ctx.redis.scard(PROCESSES), 1);
    } catch {
      // Redis unreachable: poll at the single-process rate until it is back.
    }
    const interval = count * options.averageScheduledPollInterval;
    return count < 10 ? interval * Math.random() + interval / 2 : interval * Math.random() * 2;
  }

  /**
   * Re-pushes a due job. One that Redis refused (out of memory, ...) goes back to its set for the next
   * poll; one that can never be pushed (a middleware or the client rejects it) goes to the dead set
   * rather than vanish.
   */
  private async push(json: string, set: string): Promise<void> {
    try {
      await this.ctx.client.push(parsePayload(json));
    } catch (error) {
      if (error instanceof EnqueueError) {
        await this.ctx.redis.zadd(set, formatSeconds(this.nowSeconds()), json);
        throw error;
      }
      this.ctx.logger.error(
        { err: error, set, job: json.slice(0, 1000) },
        "a due job could not be enqueued; it was moved to the dead set",
      );
      await sendToMorgue(this.ctx.redis, json, this.ctx.options);
    }
  }

  private nowSeconds(): number {
    return this.ctx.clock.now() / 1000;
  }

  private async guard(fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
      this.problems.succeeded();
    } catch (error) {
      if (!this.stopController.signal.aborted)
        this.problems.failed(error, "due scheduled jobs and retries wait in their sets; retrying at the next poll");
    }
  }
}
