/**
 * A fetched job and how to settle it. BasicFetch's acknowledge is a no-op (the job left Redis when it
 * was popped); ReliableFetch's removes it from the process's private in-progress list.
 */
export interface UnitOfWork {
  readonly queue: string;
  /** The job as text (its bytes decoded as UTF-8), for parsing and display. */
  readonly job: string;
  /**
   * The job's exact bytes as stored. A Ruby client can push bytes that are not UTF-8 (an ASCII-8BIT
   * string); decoding replaces them, so everything that removes or re-pushes a job by value uses these.
   */
  readonly raw: Buffer;
  /**
   * The job is finished (done, retried or dead): forget it. Undefined when there is nothing to wait for
   * (the common case: no promise per job); a promise when the caller must wait (backpressure).
   */
  acknowledge(): Promise<void> | undefined;
  /**
   * Put the job back at the front of its queue so it runs next, or with `atBack` at the end of it, so
   * the jobs already waiting run first.
   */
  requeue(options?: RequeueOptions): Promise<void>;
}

export interface RequeueOptions {
  atBack?: boolean;
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
  /** Resolves when every acknowledgement sent so far has been answered (reliable fetch sends them in the background). */
  drain(): Promise<void>;
  /** False while the fetcher's blocking connection is down (a pending fetch waits for a reconnect). */
  readonly connected: boolean;
  /** Closes the fetcher's dedicated connection; a pending fetch fails. */
  close(): void;
}
