/**
 * Where a batch is known from, per async call chain:
 *
 *   pushing   inside `batch.jobs(async () => ...)`: every job pushed joins that batch
 *   running   inside a batch job's `perform`: a `new Batch()` made there is a child of the job's batch
 *
 * Two stores, so that a job of a batch that enqueues an ordinary job outside a `jobs` block does not
 * make it a member.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface PushingBlock {
  readonly bid: string;
}

export interface RunningJob {
  readonly bid: string;
  readonly jid: string;
  /** The job's retry count: a re-run after a SIGKILL repeats it, a retry does not. */
  readonly attempt: number;
  /** Batches made so far by this run, so the n-th child gets the same bid in a re-run. */
  children: number;
}

export const pushing = new AsyncLocalStorage<PushingBlock>();
export const running = new AsyncLocalStorage<RunningJob>();
