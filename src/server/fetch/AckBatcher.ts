/**
 * AckBatcher: reliable fetch's acknowledgements, many per Redis call, off the job's critical path.
 *
 * - Jobs that finish in the same turn of the event loop are removed from their private list by one
 *   ack-jobs-1.lua call instead of one LREM each: one command, one promise and one reply per batch.
 *   Each job is named by its mark (ackMark.ts), a few dozen bytes, not its whole payload.
 * - `ack` returns at once (undefined) while the job is queued for acknowledgement, so its slot takes the
 *   next job while the ack is on its way; the next fetch and the ack then share one round trip
 *   (auto-pipelining) instead of following each other. Waiting for the ack before freeing the slot left
 *   the worker idle for a round trip per batch and cost reliable fetch more than half of basic fetch's
 *   throughput.
 * - Backpressure: with more than MAX_PENDING jobs not yet acknowledged (Redis slow or away), `ack`
 *   returns a promise of the write of the batch carrying its job, so unacknowledged work stays bounded.
 * - They ride with the next fetch: the slots the finished jobs freed are what that fetch fills, and
 *   reliable-fetch.lua acknowledges before it moves (`ride`), so a batch of acks costs no call, no write
 *   and no reply of its own. The fetcher tells which fetch is next (FetchOutlook): none on its way (one
 *   follows within a turn: the flush waits one more turn for it), one on its way that answers at once
 *   (the acks wait for its answer, `fetchAnswered`, then a turn for the fetch that follows it: with a
 *   backlog, the batch fetched ahead is answered while the jobs run, and the next fetch goes out as soon
 *   as their slots are free), or one waiting in Redis for a job (a call of their own, now). Sending them
 *   on their own whenever any fetch was on its way cost reliable fetch a second call per batch: about
 *   3 µs of worker CPU per no-op job, most of it the kernel's share of a loopback write.
 * - `drain()` waits for every ack in flight. A stop drains before it requeues what is left in the
 *   private lists, or finished jobs would be requeued and run again.
 *
 * The window in which a finished job can run twice (its process dies after `perform` returned, before
 * the ack reached Redis) is two event-loop turns (the flush runs on setImmediate, and may wait one more
 * for a fetch) plus at most two round trips (the fetch on its way, then the one carrying the acks), the
 * same order as an LREM per job. A failed ack is logged: the job stays in the private list and runs
 * again after a recovery (at-least-once).
 */
import type { Logger } from "../../platform/logger.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { ackMark, wholeJob } from "./ackMark.js";
import { ackJobsLua } from "./scripts.js";

/** Jobs per ack-jobs-1.lua call: matching 256 marks against a short list takes well under a millisecond of Redis time. */
const MAX_BATCH = 256;
/** Jobs finished but not yet acknowledged before `ack` makes its caller wait: a few batches' worth. */
const MAX_PENDING = 1024;

/** A finished job: its exact bytes, their decoded text, and its place in fetch order (lower: fetched earlier). */
export interface AckedJob {
  readonly raw: Buffer;
  readonly job: string;
  readonly seq: number;
}

/**
 * The fetcher's next fetch, as acks waiting for one see it: `soon` (none on its way; one may go within
 * a turn), `answering` (one on its way that answers at once; `fetchAnswered` follows), `none` (one waits
 * in Redis for a job, or the fetcher is closing: acks go on their own).
 */
export type FetchOutlook = "soon" | "answering" | "none";

/** Acknowledgements travelling with a fetch: its marks, one string per private list asked for. */
export interface Riding {
  readonly marks: string[];
  /** The fetch was answered; on an error they are sent again on their own (removing twice is harmless). */
  settle(error?: unknown): void;
}

interface Batch<J extends AckedJob> {
  /** The batch's arguments, once worked out (it takes no job after that). */
  packed?: { marks: string; whole: (string | Buffer)[] };
  jobs: J[];
  written: Promise<void>;
  resolve: () => void;
}

/**
 * ack-jobs-1.lua's arguments for a batch: the marks oldest-fetched first (so that jobs finished in fetch
 * order meet lib/ack-marks.lua's fast path), and the jobs without one, whole. Worked out once per batch.
 */
function packed<J extends AckedJob>(batch: Batch<J>): { marks: string; whole: (string | Buffer)[] } {
  if (batch.packed) return batch.packed;
  const jobs = batch.jobs.length > 1 ? [...batch.jobs].sort((a, b) => a.seq - b.seq) : batch.jobs;
  let marks = "";
  const whole: (string | Buffer)[] = [];
  for (const job of jobs) {
    const mark = ackMark(job.raw);
    if (mark === undefined) whole.push(wholeJob(job.raw, job.job));
    else marks += mark;
  }
  return (batch.packed = { marks, whole });
}

export class AckBatcher<J extends AckedJob = AckedJob> {
  /** privateKey → the batch being filled. */
  private readonly filling = new Map<string, Batch<J>>();
  /** Batches sent and not yet answered. */
  private readonly inFlight = new Set<Promise<void>>();
  private pendingJobs = 0;
  /** A flush is due: on its way (setImmediate), or waiting for a fetch's answer. */
  private scheduled = false;
  private waitedForFetch = false;
  /** The flush waits for `fetchAnswered`. */
  private awaitingAnswer = false;

  /**
   * @param settled called for every job of a batch once its write is answered (written or failed)
   * @param outlook the fetch that could carry the acks (`ride`): see FetchOutlook
   */
  constructor(
    private readonly redis: TsqRedis,
    private readonly logger: Logger,
    private readonly settled: (job: J) => void = () => undefined,
    private readonly outlook: () => FetchOutlook = () => "none",
  ) {}

  /** Queues `job` for removal from `privateKey`: undefined at once, or a promise of the write under backpressure. */
  ack(privateKey: string, job: J): Promise<void> | undefined {
    let batch = this.filling.get(privateKey);
    if (!batch) {
      let resolve!: () => void;
      const written = new Promise<void>((r) => (resolve = r));
      this.filling.set(privateKey, (batch = { jobs: [], written, resolve }));
    }
    batch.jobs.push(job);
    this.pendingJobs++;
    const { written } = batch;
    if (batch.jobs.length >= MAX_BATCH) this.send(privateKey, batch);
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onTurn);
    }
    return this.pendingJobs > MAX_PENDING ? written : undefined;
  }

  /** Resolves when every acknowledgement queued so far has been answered (written or failed). */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /**
   * Takes the acks waiting for the private lists `keys`, to travel with a fetch (reliable-fetch.lua's
   * marks, in the order of `keys`); undefined when none is waiting. A batch holding a job sent whole
   * goes on its own call instead.
   */
  ride(keys: readonly string[]): Riding | undefined {
    const taken = new Map<string, Batch<J>>();
    for (const key of keys) {
      const batch = this.filling.get(key);
      if (batch === undefined) continue;
      if (packed(batch).whole.length > 0) {
        this.send(key, batch); // packed, so it takes no more jobs: on its way now
        continue;
      }
      this.filling.delete(key);
      taken.set(key, batch);
    }
    if (taken.size === 0) return undefined;
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    this.inFlight.add(done);
    return {
      marks: keys.map((key) => {
        const batch = taken.get(key);
        return batch === undefined ? "" : packed(batch).marks;
      }),
      settle: (error?: unknown) => {
        for (const [key, batch] of taken) {
          if (error === undefined) this.finish(batch);
          else this.send(key, batch);
        }
        this.inFlight.delete(done);
        answered();
      },
    };
  }

  /** The fetch on its way was answered: acks still waiting get a turn for the fetch that follows it. */
  fetchAnswered(): void {
    if (!this.awaitingAnswer) return;
    this.awaitingAnswer = false;
    this.waitedForFetch = false;
    setImmediate(this.onTurn);
  }

  private readonly onTurn = (): void => {
    if (this.filling.size > 0) {
      const outlook = this.outlook();
      if (outlook === "answering") {
        this.awaitingAnswer = true;
        return;
      }
      if (outlook === "soon" && !this.waitedForFetch) {
        this.waitedForFetch = true;
        setImmediate(this.onTurn);
        return;
      }
    }
    this.flush();
  };

  private flush(): void {
    this.scheduled = false;
    this.waitedForFetch = false;
    this.awaitingAnswer = false;
    for (const [key, batch] of this.filling) this.send(key, batch);
  }

  /** The batch's write was answered (or failed and was logged): its jobs are settled. */
  private finish(batch: Batch<J>): void {
    this.pendingJobs -= batch.jobs.length;
    for (const job of batch.jobs) this.settled(job);
    batch.resolve();
  }

  private send(key: string, batch: Batch<J>): void {
    // A batch sent again after its fetch failed (`ride`) is no longer the one filling for its key.
    if (this.filling.get(key) === batch) this.filling.delete(key);
    const done = ackJobsLua
      .run(this.redis, key, packed(batch).marks, ...packed(batch).whole)
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.error(
            { err: error, jobs: batch.jobs.length, private_list: key },
            "could not acknowledge finished jobs; they stay in the private list and run again after a recovery",
          ),
      )
      .finally(() => {
        this.inFlight.delete(done);
        this.finish(batch);
      });
    this.inFlight.add(done);
  }
}
