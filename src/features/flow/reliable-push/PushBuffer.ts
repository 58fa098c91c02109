/**
 * PushBuffer: reliable push (Sidekiq Pro's `reliable_push!`, opt-in). While the client's Redis
 * connection is down, a push is held in memory, in order, and resolves at once with its jid; when the
 * connection is ready again the held jobs are written oldest first, FLUSH_BATCH per round trip. Once
 * one job is held, every later push is held behind it, so each producer's order is kept.
 *
 * Bounded: a push that would hold more than `maxBuffered` jobs throws PushBufferFullError naming the
 * bound; nothing is dropped silently. At `close()` the buffer gets `closeTimeoutMs` to reach Redis and
 * whatever is left is logged with its payloads (so it can be pushed again), as it is if the process
 * exits with jobs still held.
 *
 * The client's connection runs without ioredis's offline queue: a push made while Redis is away fails
 * at once and is held here, and a write in flight when the connection drops fails too. Such a write may
 * or may not have reached Redis, so it is held as "uncertain" and, before it is written again, looked
 * for (LPOS in its queue, ZSCORE in `schedule`): a job lands once, unless a worker popped it meanwhile.
 * It keeps its place: held jobs are ordered by when their push began. A connection that hangs without
 * closing is not seen as down.
 */
import { PushRefusedError } from "../../../wire/errors.js";
import { PushBufferFullError } from "./errors.js";
import { SCHEDULE, queueKey } from "../../../wire/keys.js";
import { logger as rootLogger, type Logger } from "../../../platform/logger.js";
import type { JobPayload } from "../../../wire/payload.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { deferred, sleep } from "../../../platform/util/sleep.js";
import type { ReliablePushSettings } from "./settings.js";
import type { PreparedJob, WritePath } from "../../../client/plugin.js";

export type { PreparedJob } from "../../../client/plugin.js";

interface Held extends PreparedJob {
  /** Order of the push (a counter): held jobs stay sorted by it. */
  seq: number;
  /** A write of it failed after it was sent: it may already be in Redis. */
  uncertain: boolean;
}

/** ioredis's errors for a connection that is down or dropped (the write never got an answer). */
function isConnectionError(error: unknown): boolean {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return /Connection is closed|Stream isn't writeable|ECONNRE|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTCONN/i.test(message);
}

/** Jobs written per round trip while flushing. */
const FLUSH_BATCH = 500;
/** ms between checks of the connection while jobs are held. */
const READY_POLL_MS = 50;

export class PushBuffer implements WritePath {
  /** False once closed. */
  private open = true;
  /** Whatever ends the process, the jobs still held are named in the log. */
  private readonly onExit = (): void => this.reportLeft("the process exited");
  /** Held jobs from `head` on: a moving head, so a flush does not shift 10,000 entries per batch. */
  private held: Held[] = [];
  private seq = 0;
  private head = 0;
  /** Direct writes not yet answered; held jobs wait for them (they are older). */
  private inflight = 0;
  private flushing: Promise<void> | undefined;
  private readonly closing = new AbortController();
  /**
   * Resolved when the connection closes. Without re-sending, ioredis forgets the commands in flight at
   * a drop without settling them: every write races this, and a write still unanswered then counts as
   * failed (uncertain).
   */
  private dropped = deferred();
  private readonly onClose = (): void => {
    const signal = this.dropped;
    this.dropped = deferred();
    signal.resolve();
  };

  constructor(
    private readonly redis: TsqRedis,
    private readonly write: (entries: PreparedJob[]) => Promise<void>,
    private readonly settings: ReliablePushSettings,
    /** Other lists a job may have landed in (a plug-in's alternate write: a parked list). */
    private readonly landingLists: (job: JobPayload) => string[] = () => [],
    private readonly logger: Logger = rootLogger(),
  ) {
    process.on("exit", this.onExit);
    redis.on("close", this.onClose);
  }

  get size(): number {
    return this.held.length - this.head;
  }

  get heldJobs(): number {
    return this.size;
  }

  /** Writes now when Redis is up and nothing is held; holds the jobs otherwise. */
  async push(entries: PreparedJob[]): Promise<void> {
    const seq = ++this.seq;
    if (this.size === 0 && this.redis.status === "ready") {
      this.inflight++;
      try {
        await this.guarded(entries);
        return;
      } catch (error) {
        if (!isConnectionError(error)) throw error; // Redis answered and refused: the caller hears it
        this.hold(entries, seq, !/Stream isn't writeable/.test(String((error as Error).cause ?? error)));
      } finally {
        this.inflight--;
      }
      return;
    }
    this.hold(entries, seq, false);
  }

  /**
   * Waits up to `closeTimeoutMs` for the held jobs to reach Redis, then logs those left. Idempotent.
   * The caller closes the connection afterwards.
   */
  async close(): Promise<void> {
    if (!this.open) return;
    const deadline = performance.now() + this.settings.closeTimeoutMs;
    while (this.size > 0 && performance.now() < deadline) await sleep(READY_POLL_MS);
    this.open = false;
    process.off("exit", this.onExit);
    this.redis.off("close", this.onClose);
    this.reportLeft("the client was closed");
    this.closing.abort();
  }

  /** Logs every held job's payload (so it can be pushed again) and forgets them. */
  reportLeft(why: string): void {
    if (this.size === 0) return;
    const left = this.held.slice(this.head);
    this.held = [];
    this.head = 0;
    this.logger.error(
      { jobs: left.map(({ job, json }) => ({ queue: job.queue, jid: job.jid, payload: json })) },
      `${why} while Redis was unreachable: ${left.length} buffered job(s) were NOT enqueued; push these payloads again`,
    );
  }

  private hold(entries: PreparedJob[], seq: number, uncertain: boolean): void {
    if (this.closing.signal.aborted || !this.open)
      throw new PushBufferFullError("the client is closed: the job was not enqueued");
    if (this.size + entries.length > this.settings.maxBuffered) {
      const first = entries[0]!.job;
      throw new PushBufferFullError(
        `reliable push buffer full: ${this.size} jobs already held, at most reliablePush.maxBuffered = ` +
          `${this.settings.maxBuffered}, while Redis is unreachable; job ${first.class} (jid ${first.jid})` +
          `${entries.length > 1 ? ` and ${entries.length - 1} more` : ""} was NOT enqueued. ` +
          "Retry it once Redis is back, or raise maxBuffered.",
      );
    }
    if (this.size === 0) this.logger.warn("Redis unreachable: reliable push holds new jobs in memory until it is back");
    const items = entries.map((entry) => ({ ...entry, seq, uncertain }));
    // Usually last; a write that failed in flight goes back before the pushes that began after it.
    let at = this.held.length;
    while (at > this.head && this.held[at - 1]!.seq > seq) at--;
    this.held.splice(at, 0, ...items);
    this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
  }

  private async flush(): Promise<void> {
    while (this.size > 0 && !this.closing.signal.aborted) {
      if (this.redis.status !== "ready" || this.inflight > 0) {
        await sleep(READY_POLL_MS, this.closing.signal);
        continue;
      }
      const batch = this.held.slice(this.head, this.head + FLUSH_BATCH);
      try {
        const toWrite = await this.notLanded(batch);
        if (toWrite.length > 0) await this.guarded(toWrite);
      } catch (error) {
        if (isConnectionError(error)) {
          for (const item of batch) item.uncertain = true; // maybe partly written: look before the next try
          continue;
        }
        // Redis answered and refused (out of memory, read-only), or a plug-in's write refused some jobs
        // (a full concurrency-limit parked list): these jobs cannot land; say so, with them.
        const lost = error instanceof PushRefusedError ? batch.filter((i) => error.jids.includes(i.job.jid)) : batch;
        this.logger.error(
          { err: error, jobs: lost.map(({ job, json }) => ({ queue: job.queue, jid: job.jid, payload: json })) },
          `Redis refused ${lost.length} buffered job(s); they were NOT enqueued: push these payloads again`,
        );
      }
      if (this.size === 0) return; // reportLeft emptied the buffer meanwhile
      this.head += batch.length;
      if (this.head > FLUSH_BATCH * 20) {
        this.held = this.held.slice(this.head);
        this.head = 0;
      }
      if (this.size === 0) this.logger.info("Redis is back: every buffered job was pushed");
    }
  }

  /** The write, or a "Connection is closed." failure if the connection drops before it is answered. */
  private guarded(entries: PreparedJob[]): Promise<void> {
    const dropped = this.dropped.promise.then(() => {
      throw new Error("Connection is closed.");
    });
    return Promise.race([this.write(entries), dropped]);
  }

  /** The batch without the uncertain jobs already in Redis (one pipelined look-up for those only). */
  private async notLanded(batch: Held[]): Promise<Held[]> {
    const uncertain = batch.filter((item) => item.uncertain);
    if (uncertain.length === 0) return batch;
    const pipeline = this.redis.pipeline();
    const looked: Held[] = [];
    for (const item of uncertain) {
      const { job, json } = item;
      if (job.at !== undefined) pipeline.zscore(SCHEDULE, json);
      else pipeline.lpos(queueKey(job.queue), json);
      looked.push(item);
      // A job a plug-in wrote another way may sit elsewhere (admitted at push: parked if no slot was free).
      if (job.at === undefined) {
        for (const list of this.landingLists(job)) {
          pipeline.lpos(list, json);
          looked.push(item);
        }
      }
    }
    const found = (await pipeline.exec()) ?? [];
    const landed = new Set<Held>();
    found.forEach(([error, value], i) => {
      if (error) throw error;
      if (value !== null) landed.add(looked[i]!);
    });
    return landed.size === 0 ? batch : batch.filter((item) => !landed.has(item));
  }
}
