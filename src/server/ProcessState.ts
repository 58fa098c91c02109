/**
 * What this process is doing right now, shared by the Processors (who write it) and the Heartbeat
 * (who publishes it): the jobs in flight, keyed by slot id (Sidekiq's `tid`), and the processed/failed
 * counts not yet flushed to Redis.
 */

export interface WorkEntry {
  queue: string;
  /** The job exactly as fetched (a JSON string), as Sidekiq's work hash stores it. */
  payload: string;
  /** Epoch seconds (integer) when the job started. */
  runAt: number;
  jid: string | undefined;
  className: string | undefined;
  /** performance.now() at start, for "running for N s" in busy dumps. */
  startedMs: number;
}

export class ProcessState {
  readonly work = new Map<string, WorkEntry>();
  /** Told of every job start (entry) and end (undefined), e.g. to tell a tsq-cluster supervisor at once. */
  onWork: ((tid: string, entry: WorkEntry | undefined) => void) | undefined;
  private processed = 0;
  private failed = 0;

  begin(tid: string, entry: WorkEntry): void {
    this.work.set(tid, entry);
    this.onWork?.(tid, entry);
  }

  end(tid: string): void {
    this.work.delete(tid);
    this.onWork?.(tid, undefined);
  }

  get busy(): number {
    return this.work.size;
  }

  countProcessed(failed: boolean): void {
    this.processed++;
    if (failed) this.failed++;
  }

  /** Takes the unflushed counts; call `restoreCounts` if writing them to Redis failed. */
  takeCounts(): { processed: number; failed: number } {
    const counts = { processed: this.processed, failed: this.failed };
    this.processed = 0;
    this.failed = 0;
    return counts;
  }

  restoreCounts(counts: { processed: number; failed: number }): void {
    this.processed += counts.processed;
    this.failed += counts.failed;
  }
}
