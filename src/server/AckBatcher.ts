/**
 * AckBatcher: reliable fetch's acknowledgements, many per Redis call, off the job's critical path.
 *
 * - Jobs that finish in the same turn of the event loop are removed from their private list by one
 *   ack-jobs-1.lua call instead of one LREM each: one command, one promise and one reply per batch.
 * - `ack` resolves as soon as the job is queued for acknowledgement, so its slot takes the next job
 *   while the ack is on its way; the next fetch and the ack then share one round trip (auto-pipelining)
 *   instead of following each other. Waiting for the ack before freeing the slot left the worker idle
 *   for a round trip per batch and cost reliable fetch more than half of basic fetch's throughput.
 * - Backpressure: with more than MAX_PENDING jobs not yet acknowledged (Redis slow or away), `ack`
 *   waits until the batch carrying its job is written, so unacknowledged work stays bounded.
 * - `drain()` waits for every ack in flight. A stop drains before it requeues what is left in the
 *   private lists, or finished jobs would be requeued and run again.
 *
 * The window in which a finished job can run twice (its process dies after `perform` returned, before
 * the ack reached Redis) is one event-loop turn (the flush runs on setImmediate) plus one round trip,
 * the same order as an LREM per job. A failed ack is logged: the job stays in the private list and runs
 * again after a recovery (at-least-once).
 */
import type { Logger } from "../logger.js";
import type { TsqRedis } from "../redis/connection.js";

/** Jobs per ack-jobs-1.lua call: 256 LREMs of short lists take well under a millisecond of Redis time. */
const MAX_BATCH = 256;
/** Jobs finished but not yet acknowledged before `ack` makes its caller wait: a few batches' worth. */
const MAX_PENDING = 1024;

interface Batch {
  jobs: (string | Buffer)[];
  written: Promise<void>;
  resolve: () => void;
}

export class AckBatcher {
  /** privateKey → the batch being filled. */
  private readonly filling = new Map<string, Batch>();
  /** Batches sent and not yet answered. */
  private readonly inFlight = new Set<Promise<void>>();
  private pendingJobs = 0;
  private scheduled = false;

  constructor(
    private readonly redis: TsqRedis,
    private readonly logger: Logger,
  ) {}

  /** Queues `job` for removal from `privateKey`; resolves at once, or after the write under backpressure. */
  ack(privateKey: string, job: string | Buffer): Promise<void> {
    let batch = this.filling.get(privateKey);
    if (!batch) {
      let resolve!: () => void;
      const written = new Promise<void>((r) => (resolve = r));
      this.filling.set(privateKey, (batch = { jobs: [], written, resolve }));
    }
    batch.jobs.push(job);
    this.pendingJobs++;
    if (batch.jobs.length >= MAX_BATCH) this.send(privateKey, batch);
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return this.pendingJobs > MAX_PENDING ? batch.written : Promise.resolve();
  }

  /** Resolves when every acknowledgement queued so far has been answered (written or failed). */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private flush(): void {
    this.scheduled = false;
    for (const [key, batch] of this.filling) this.send(key, batch);
  }

  private send(key: string, batch: Batch): void {
    this.filling.delete(key);
    const done = this.redis
      .ackJobs(key, ...batch.jobs)
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.error(
            { err: error, jobs: batch.jobs.length, private_list: key },
            "could not acknowledge finished jobs; they stay in the private list and run again after a recovery",
          ),
      )
      .finally(() => {
        this.pendingJobs -= batch.jobs.length;
        this.inFlight.delete(done);
        batch.resolve();
      });
    this.inFlight.add(done);
  }
}
