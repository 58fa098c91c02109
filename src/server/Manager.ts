/**
 * Manager: one per capsule. Owns the capsule's fetcher and its `concurrency` job slots. A single fetch
 * loop pops a job whenever a slot is free, so a busy capsule holds no job it cannot start, and one
 * blocking connection serves the whole capsule.
 *
 *   start()           begin fetching
 *   quiet()           stop fetching; running jobs go on
 *   stop(deadline)    quiet, wait for running jobs until `deadline`, then requeue what is left
 */
import { randomInt } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { CapsuleConfig } from "../config/options.js";
import { deferred, sleep } from "../util/sleep.js";
import { BasicFetch } from "./BasicFetch.js";
import { ReliableFetch } from "./ReliableFetch.js";
import type { ServerContext } from "./context.js";
import { Processor, type Slot } from "./Processor.js";
import { describeBatch } from "./ProcessState.js";
import type { Fetcher, UnitOfWork } from "./unitOfWork.js";

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

function newFetcher(ctx: ServerContext, capsule: CapsuleConfig): Fetcher {
  const blocking = ctx.connect(`tsq-fetch-${capsule.name}`, true);
  const { fetch, fetchTimeout } = ctx.options;
  return fetch === "reliable"
    ? new ReliableFetch(ctx.redis, blocking, ctx.identity, capsule.queues, fetchTimeout)
    : new BasicFetch(ctx.redis, blocking, capsule.queues, fetchTimeout);
}

export class Manager {
  readonly capsule: CapsuleConfig;
  private readonly fetcher: Fetcher;
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

  constructor(
    private readonly ctx: ServerContext,
    capsule: CapsuleConfig,
    fetcher?: Fetcher,
  ) {
    this.capsule = capsule;
    this.fetcher = fetcher ?? newFetcher(ctx, capsule);
    this.processor = new Processor(ctx, ctx.serverMiddleware.copy());
    this.lanes = Array.from({ length: capsule.concurrency }, () => ({
      slot: { tid: newTid(), controller: new AbortController(), abandoned: false },
      running: undefined,
    }));
    this.free = [...this.lanes];
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

  /** Idempotent. `deadline` is a performance.now() time in ms. */
  stop(deadline: number): Promise<void> {
    this.stopped ??= this.shutdown(deadline);
    return this.stopped;
  }

  /** Cuts a graceful stop short: running jobs are requeued at once (a second INT). */
  hurry(): void {
    this.hurryController.abort();
  }

  private get quieted(): boolean {
    return this.quietController.signal.aborted;
  }

  private async fetchLoop(): Promise<void> {
    while (!this.quieted) {
      if (this.free.length === 0) {
        await this.slotFreed.promise;
        this.slotFreed = deferred();
        continue;
      }
      let units: UnitOfWork[];
      try {
        units = await this.fetcher.retrieveWork(this.free.length);
      } catch (error) {
        this.ctx.logger.error({ err: error, capsule: this.capsule.name }, "fetch failed; retrying in 1 s");
        await sleep(1000, this.quietController.signal);
        continue;
      }
      // Sidekiq requeues a job fetched after quiet rather than start it.
      if (this.quieted) {
        // Newest first, so the oldest ends up at the tail again and is popped first.
        if (units.length > 0) await this.fetcher.bulkRequeue([...units].reverse());
        break;
      }
      if (units.length > 0 && this.ctx.state.onBatch) this.ctx.state.onBatch(describeBatch(units));
      for (const unit of units) this.run(unit, this.free.pop()!);
    }
  }

  private run(unit: UnitOfWork, lane: Lane): void {
    const done = this.processor
      .process(unit, lane.slot)
      .catch((error: unknown) => this.ctx.logger.error({ err: error }, "processor failed"))
      .finally(() => {
        lane.running = undefined;
        this.runningCount--;
        if (!lane.slot.abandoned) this.free.push(lane);
        this.slotFreed.resolve();
      });
    lane.running = { unit, done };
    this.runningCount++;
  }

  private busyLanes(): (Lane & { running: Running })[] {
    return this.lanes.filter((lane): lane is Lane & { running: Running } => lane.running !== undefined);
  }

  private async shutdown(deadline: number): Promise<void> {
    this.quiet();
    await this.loop;
    const remaining = deadline - performance.now();
    if (this.runningCount > 0 && remaining > 0) {
      const pending = this.busyLanes().map((lane) => lane.running.done);
      const settled = new AbortController();
      const wait = sleep(remaining, AbortSignal.any([settled.signal, this.hurryController.signal]));
      await Promise.race([Promise.allSettled(pending), wait]);
      settled.abort();
    }
    if (this.runningCount > 0) await this.hardShutdown();
    this.fetcher.close();
  }

  /** Requeues every unfinished job, then tells the jobs (AbortSignal) they have been abandoned. */
  private async hardShutdown(): Promise<void> {
    const busy = this.busyLanes();
    const slots = busy.map((lane) => lane.slot);
    for (const slot of slots) slot.abandoned = true;
    const units = busy.map((lane) => lane.running.unit);
    this.ctx.logger.warn(
      { capsule: this.capsule.name, jobs: units.length },
      "timeout reached; requeueing unfinished jobs, they will run again",
    );
    await this.fetcher.bulkRequeue(units);
    for (const slot of slots) slot.controller.abort(new Error("tsq hard shutdown: the job was requeued"));
  }
}
