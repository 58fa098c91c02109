/**
 * PausedQueues: one worker's cached copy of the `paused` set (Sidekiq Pro's queue pausing, also read by
 * OSS 8.1.1+), refreshed with one SMEMBERS every POLL_INTERVAL ms, so a pause made by tsqctl, the admin
 * API or a Ruby process reaches every fetcher within that interval plus one read, without a restart.
 * Pro learns of pauses over a private pub/sub channel and its users report pauses applied only after a
 * restart (#5700, #6574): polling the public set needs nothing but the set.
 *
 * Shared by the capsules of a worker (`pausedQueuesFor`): the first Manager starts the poll, the
 * last one to stop ends it, so nothing keeps a stopped process alive.
 */
import { EventEmitter } from "node:events";
import { PAUSED } from "../../wire/keys.js";
import type { Logger } from "../../platform/logger.js";
import { ProblemLog } from "../../platform/redis/errors.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { deferred, sleep } from "../../platform/util/sleep.js";
import { workerLocal, type WorkerLocals } from "../WorkerLocals.js";

/** ms between two reads of the `paused` set: half the 1 s a pause may take to apply. */
export const POLL_INTERVAL = 500;

/** What a fetcher needs: is a queue paused, and a way to wait until that may have changed. */
export interface PauseView {
  has(queue: string): boolean;
  /** Resolves at the next change of the set (or never, while it does not change). */
  changed(): Promise<void>;
}

export class PausedQueues extends EventEmitter<{ change: [paused: ReadonlySet<string>] }> implements PauseView {
  private paused: ReadonlySet<string> = new Set();
  private changeSignal = deferred();
  private readonly stopController = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly problems: ProblemLog;
  private users = 0;

  constructor(
    private readonly redis: TsqRedis,
    logger: Logger,
    /** ms between reads. */
    private readonly interval = POLL_INTERVAL,
  ) {
    super();
    this.problems = new ProblemLog("reading the paused queues", logger);
  }

  /** Cheap: a Set lookup, and no lookup at all while nothing is paused. */
  has(queue: string): boolean {
    return this.paused.size > 0 && this.paused.has(queue);
  }

  changed(): Promise<void> {
    return this.changeSignal.promise;
  }

  /** Counts a user; the first one starts polling (the first read is awaited so no fetch precedes it). */
  async acquire(): Promise<void> {
    this.users++;
    if (this.loop) return;
    const first = this.read();
    this.loop = first.then(() => this.poll());
    await first;
  }

  /** The last user to leave stops the poll. Idempotent per user. */
  release(): void {
    if (--this.users > 0) return;
    this.stopController.abort();
  }

  private async poll(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      await sleep(this.interval, signal);
      if (!signal.aborted) await this.read();
    }
  }

  /** A failed read keeps the last known set (logged once until reads work again). */
  private async read(): Promise<void> {
    let names: string[];
    try {
      names = await this.redis.smembers(PAUSED);
      this.problems.succeeded();
    } catch (error) {
      this.problems.failed(error, "the last known paused queues stay in force");
      return;
    }
    if (names.length === this.paused.size && names.every((name) => this.paused.has(name))) return;
    this.paused = new Set(names);
    const signal = this.changeSignal;
    this.changeSignal = deferred();
    signal.resolve();
    this.emit("change", this.paused);
  }
}

const PAUSED_QUEUES = workerLocal<PausedQueues>("paused queues");

/** The worker's PausedQueues, shared by its capsules, made at first use (kept on its context, not here). */
export function pausedQueuesFor(
  owner: { readonly locals: WorkerLocals },
  redis: TsqRedis,
  logger: Logger,
): PausedQueues {
  return owner.locals.get(PAUSED_QUEUES, () => new PausedQueues(redis, logger));
}
