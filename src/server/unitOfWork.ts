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
  /** Waits up to the fetch timeout for a job; null when none arrived. */
  retrieveWork(): Promise<UnitOfWork | null>;
  /** Returns unfinished jobs to their queues (hard shutdown). */
  bulkRequeue(units: UnitOfWork[]): Promise<void>;
  /** Closes the fetcher's dedicated connection. */
  close(): void;
}
