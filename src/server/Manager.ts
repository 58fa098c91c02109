/**
 * Manager: one per capsule. Owns the capsule's fetcher and its `concurrency` job slots. A single fetch
 * loop pops a job whenever a slot is free, so a busy capsule holds no job it cannot start, and one
 * blocking connection serves the whole capsule.
 *
 *   start()           begin fetching
 *   quiet()           stop fetching; running jobs go on
 *   stop(budget)      quiet, wait for running jobs until the budget's deadline, then requeue what is left
 */
import { randomInt } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { CapsuleConfig } from "../platform/config/options.js";
import type { PausedQueues } from "./fetch/PausedQueues.js";
import { isCluster } from "../platform/redis/clusterConnection.js";
import { ProblemLog } from "../platform/redis/errors.js";
import type { Unblocker } from "../platform/redis/Unblocker.js";
import { deferred, settlesWithin, sleep } from "../platform/util/sleep.js";
import { capsuleFetcher, type CapsuleFetcher } from "./fetch/capsuleFetcher.js";
import type { ServerContext } from "./context.js";
import { Processor, type Slot } from "./Processor.js";
import { describeBatch } from "./ProcessState.js";
import type { StopBudget } from "./StopBudget.js";
import type { Fetcher, UnitOfWork } from "./fetch/unitOfWork.js";

interface Running {
  unit: UnitOfWork;
  done: Promise<void>;
}

/**
 * A slot and what it runs now. A field rather than a Map entry per job: a long-lived Map whose entries
 * come and go at job rate reallocates its table in V8's old generation (see ProcessState).
 */
interface Lane {
  readonly slot: Slot;
  running: Running | undefined;
}

/** Sidekiq-style thread ids: short base-36 strings, unique within the process. */
function newTid(): string {
  return randomInt(36 ** 5).toString(36);
}

/** Tries to unblock a stopping fetch this many times, UNBLOCK_PAUSE_MS apart (a fetch sent, not yet waiting). */
const UNBLOCK_TRIES = 20;
const UNBLOCK_PAUSE_MS = 50;

export class Manager {
  readonly capsule: CapsuleConfig;
  private readonly fetcher: Fetcher;
  /** Ends the fetcher's wait in Redis at a hurried stop; absent with a fetcher given by a test. */
  private readonly unblocker: Unblocker | undefined;
  /** The process's paused queues; a change for this capsule ends the fetch's wait (see onPauseChange). */
  private readonly paused: PausedQueues | undefined;
  private pausedHere = "";
  private readonly processor: Processor;
  private readonly lanes: Lane[];
  private readonly free: Lane[];
  private runningCount = 0;
  private readonly quietController = new AbortController();
  /** Aborted by `hurry()`: stop waiting for running jobs and requeue them now. */
  private readonly hurryController = new AbortController();
  private loop: Promise<void> | undefined;
  private slotFreed = deferred();
  private stopped: Promise<void> | undefined;
  private readonly fetchProblems: ProblemLog;

  constructor(
    private readonly ctx: ServerContext,
    capsule: CapsuleConfig,
    fetcher?: Fetcher,
  ) {
    this.capsule = capsule;
    const made: CapsuleFetcher = fetcher
      ? { fetcher, unblocker: undefined, paused: undefined }
      : capsuleFetcher(ctx, capsule);
    this.fetcher = made.fetcher;
    this.unblocker = made.unblocker;
    this.paused = made.paused;
    this.processor = new Processor(ctx, ctx.serverMiddleware.copy());
    this.lanes = Array.from({ length: capsule.concurrency }, () => ({
      slot: {
        tid: newTid(),
        controller: new AbortController(),
        abandoned: false,
        stopping: this.quietController.signal,
      },
      running: undefined,
    }));
    this.free = [...this.lanes];
    this.fetchProblems = new ProblemLog(`fetch (capsule ${capsule.name})`, ctx.logger);
  }

  get busy(): number {
    return this.runningCount;
  }

  start(): void {
    this.loop ??= this.fetchLoop();
  }

  quiet(): void {
    if (this.quietController.signal.aborted) return;
    this.quietController.abort();
    this.slotFreed.resolve();
  }

  /** Idempotent. The budget says how long running jobs and the requeue may take. */
  stop(budget: StopBudget): Promise<void> {
    this.stopped ??= this.shutdown(budget);
    return this.stopped;
  }

  /** Cuts a graceful stop short: running jobs are requeued at once (a second INT). */
  hurry(): void {
    this.hurryController.abort();
  }

  private get quieted(): boolean {
    return this.quietController.signal.aborted;
  }

  /**
   * A queue of this capsule was paused or unpaused: a fetch blocked in Redis on the old key list ends at
   * once (CLIENT UNBLOCK) and the next one uses the new list, rather than within fetchTimeout.
   */
  private readonly onPauseChange = (paused: ReadonlySet<string>): void => {
    const here = this.capsule.queues
      .map((q) => q.name)
      .filter((name) => paused.has(name))
      .join("\n");
    if (here === this.pausedHere) return;
    this.pausedHere = here;
    if (this.unblocker?.ready) this.unblocker.unblock().catch(() => undefined); // a failed unblock: the fetch times out
  };

  private async fetchLoop(): Promise<void> {
    if (this.paused) {
      this.paused.on("change", this.onPauseChange);
      // The first read of the set comes before the first fetch; an unreachable Redis delays it by 1 s at most.
      await settlesWithin(this.paused.acquire(), 1000, this.quietController.signal);
    }
    while (!this.quieted) {
      if (this.free.length === 0) {
        await this.slotFreed.promise;
        this.slotFreed = deferred();
        // Jobs finishing in this turn free their slots too: one fetch fills them all, rather than one
        // fetch for the first slot and another for the rest.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      let units: UnitOfWork[];
      try {
        units = await this.fetcher.retrieveWork(this.free.length);
        this.fetchProblems.succeeded();
      } catch (error) {
        if (this.quieted) break;
        this.fetchProblems.failed(error, "no job is fetched meanwhile; retrying every second");
        await sleep(1000, this.quietController.signal);
        continue;
      }
      // Sidekiq requeues a job fetched after quiet rather than start it.
      if (this.quieted) {
        // Newest first, so the oldest ends up at the tail again and is popped first.
        if (units.length > 0) {
          await this.fetcher
            .bulkRequeue([...units].reverse())
            .catch((error: unknown) => this.reportUnrequeued(units, error));
        }
        break;
      }
      if (units.length > 0 && this.ctx.state.onBatch) this.ctx.state.onBatch(describeBatch(units));
      for (const unit of units) this.run(unit, this.free.pop()!);
    }
  }

  private run(unit: UnitOfWork, lane: Lane): void {
    const freed = (): void => {
      lane.running = undefined;
      this.runningCount--;
      if (!lane.slot.abandoned) {
        // A job cancelled or timed out aborted the slot's signal: the next job gets a fresh one.
        if (lane.slot.controller.signal.aborted) lane.slot.controller = new AbortController();
        this.free.push(lane);
      }
      this.slotFreed.resolve();
    };
    // then(ok, fail) rather than catch().finally(): three promises fewer per job.
    const done = this.processor.process(unit, lane.slot).then(freed, (error: unknown) => {
      try {
        this.ctx.logger.error({ err: error }, "processor failed");
      } finally {
        freed();
      }
    });
    lane.running = { unit, done };
    this.runningCount++;
  }

  private busyLanes(): (Lane & { running: Running })[] {
    return this.lanes.filter((lane): lane is Lane & { running: Running } => lane.running !== undefined);
  }

  private async shutdown(budget: StopBudget): Promise<void> {
    this.quiet();
    if (this.paused && this.loop) {
      this.paused.off("change", this.onPauseChange);
      this.paused.release();
    }
    // The fetch loop sees quiet when its blocking fetch returns (within fetchTimeout s). An unreachable
    // Redis never answers: closing the fetcher's connection then fails the pending fetch.
    const fetchWait = this.fetcher.connected ? (this.ctx.options.fetchTimeout + 1) * 1000 : 0;
    if (this.loop && !(await settlesWithin(this.loop, fetchWait, budget.hurried)))
      await this.endFetch(this.loop, budget);
    const remaining = budget.jobsDeadline - performance.now();
    if (this.runningCount > 0 && remaining > 0) {
      const pending = this.busyLanes().map((lane) => lane.running.done);
      const cut = AbortSignal.any([this.hurryController.signal, budget.hurried]);
      await settlesWithin(Promise.allSettled(pending), remaining, cut);
    }
    if (this.runningCount > 0) await this.hardShutdown(budget);
    // Acks still in flight land before the Launcher requeues what is left in the private lists.
    if (!(await budget.within(this.ctx.redis, () => this.fetcher.drain())))
      this.ctx.logger.warn("some finished jobs could not be acknowledged in time; they may run again after a recovery");
    this.fetcher.close();
  }

  /**
   * Ends a fetch still waiting in Redis (a second signal cut the wait for it) before anything is
   * requeued: unblocked from the shared connection, its loop sees quiet and ends. Closing its socket
   * instead could let Redis serve that fetch a job requeued next (see Unblocker). When Redis does not
   * answer, the socket is closed: a requeue cannot reach Redis then either, so no job can follow it.
   */
  private async endFetch(loop: Promise<void>, budget: StopBudget): Promise<void> {
    const unblocker = this.unblocker;
    let ended = false;
    if (unblocker?.ready && this.fetcher.connected) {
      await budget.within(this.ctx.redis, async () => {
        // A fetch sent but not yet waiting is not unblocked by the first try: try until the loop ends.
        for (let i = 0; i < UNBLOCK_TRIES && !ended; i++) {
          await unblocker.unblock();
          ended = await settlesWithin(loop, UNBLOCK_PAUSE_MS);
        }
      });
    } else if (isCluster(this.ctx.redis) && this.fetcher.connected) {
      // No unblocker on a Redis Cluster, and closing the socket there lost the job requeued next
      // (test/platform/shards/redisClusterFeatures.test.ts, 1 run of 3; most likely the node served it
      // to the waiting fetch before it saw the socket close). The fetch ends by itself within
      // fetchTimeout s, before anything is requeued; a job it brings back, the loop requeues.
      ended = await settlesWithin(loop, (this.ctx.options.fetchTimeout + 1) * 1000);
    }
    if (!ended) this.fetcher.close();
  }

  /** Requeues every unfinished job, then tells the jobs (AbortSignal) they have been abandoned. */
  private async hardShutdown(budget: StopBudget): Promise<void> {
    const busy = this.busyLanes();
    const slots = busy.map((lane) => lane.slot);
    for (const slot of slots) slot.abandoned = true;
    const units = busy.map((lane) => lane.running.unit);
    this.ctx.logger.warn(
      { capsule: this.capsule.name, jobs: units.length },
      "timeout reached; requeueing unfinished jobs, they will run again",
    );
    let requeued = false;
    let failure: unknown;
    await budget.within(this.ctx.redis, async () => {
      try {
        await this.fetcher.bulkRequeue(units);
        requeued = true;
      } catch (error) {
        failure = error;
      }
    });
    if (!requeued) this.reportUnrequeued(units, failure);
    for (const slot of slots) slot.controller.abort(new Error("tsq hard shutdown: the job was requeued"));
  }

  /**
   * Jobs that could not go back to their queues. Reliable fetch still holds them in Redis; BasicFetch
   * held them only here, so their payloads go to the log, the one place left to recover them from.
   */
  private reportUnrequeued(units: UnitOfWork[], error: unknown): void {
    const why = error === undefined ? "Redis unreachable" : "Redis refused the requeue";
    if (this.ctx.options.fetch === "reliable") {
      this.ctx.logger.warn(
        { err: error, jobs: units.length },
        `${why}: unfinished jobs stay in this process's private lists; the next reliable process recovers them`,
      );
      return;
    }
    this.ctx.logger.error(
      { err: error, jobs: units.map((unit) => ({ queue: unit.queue, payload: unit.job })) },
      `${why}: ${units.length} unfinished job(s) could not be requeued; push these payloads again to run them`,
    );
  }
}
