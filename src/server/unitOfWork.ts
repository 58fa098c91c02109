/**
 * A fetched job and how to settle it. BasicFetch's acknowledge is a no-op (the job left Redis when it
 * was popped); ReliableFetch's removes it from the process's private in-progress list.
 */
export interface UnitOfWork {
  readonly queue: string;
  /** The job exactly as stored (JSON text). */
  readonly job: string;
  /** The job is finished (done, retried or dead): forget it. */
  acknowledge(): Promise<void>;
  /** Put the job back at the front of its queue so it runs next. */
  requeue(): Promise<void>;
}

/** A fetch strategy for one capsule. */
export interface Fetcher {
  /**
   * Waits up to the fetch timeout for work and returns between 1 and `max` jobs, all from one queue (the
   * first non-empty one in this fetch's order); an empty array when none arrived. `max` is the number of
   * free slots, so no fetched job ever waits in memory for a slot.
   */
  retrieveWork(max: number): Promise<UnitOfWork[]>;
  /** Returns unfinished jobs to their queues (hard shutdown). */
  bulkRequeue(units: UnitOfWork[]): Promise<void>;
  /** Closes the fetcher's dedicated connection. */
  close(): void;
}
