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
  /** What the job last reported of its progress (`this.progress`), published in its work entry. */
  progress?: unknown;
}

/** What a supervisor is told about a job about to start. */
export interface StartedJob {
  jid: string | undefined;
  class: string | undefined;
  queue: string;
}

/**
 * A fetched batch as one line per job, `queue TAB class TAB jid`: one short string crosses the IPC
 * channel per batch (a list of objects cost the child and the supervisor ~1 µs of JSON per job). jid and
 * class are read from the job text without parsing it (the Processor parses it right after); a nested
 * "jid" inside args written before the top-level one can mislead it, which only affects a log.
 */
export function describeBatch(units: readonly { job: string; queue: string }[]): string {
  let text = "";
  for (const { job, queue } of units) {
    const jid = /"jid":"([^"]*)"/.exec(job)?.[1] ?? "";
    const klass = /"class":"([^"]*)"/.exec(job)?.[1] ?? "";
    text += `${text === "" ? "" : "\n"}${queue}\t${klass}\t${jid}`;
  }
  return text;
}

/** The jobs of a `describeBatch` text. */
export function batchJobs(text: string): StartedJob[] {
  if (text === "") return [];
  return text.split("\n").map((line) => {
    const [queue = "", klass = "", jid = ""] = line.split("\t");
    return { jid: jid || undefined, class: klass || undefined, queue };
  });
}

export class ProcessState {
  /**
   * tid → the job it runs, or undefined when idle. A tid's key stays once seen (there is one per slot):
   * a long-lived Map whose entries are added and deleted at job rate keeps reallocating its table in
   * V8's old generation, which cost a full collection every second and RSS that crept up under load.
   */
  private readonly slots = new Map<string, WorkEntry | undefined>();
  private running = 0;
  /**
   * Told of each fetched batch before any of its jobs starts, e.g. to tell a tsq-cluster supervisor,
   * which can then name a job that blocks the event loop from its first instruction.
   */
  onBatch: ((batch: string) => void) | undefined;
  private processed = 0;
  private failed = 0;
  /** Jobs the worker gave up on (their slot freed) whose promise has not settled yet. */
  private abandonedNow = 0;

  begin(tid: string, entry: WorkEntry): void {
    if (this.slots.get(tid) === undefined) this.running++;
    this.slots.set(tid, entry);
  }

  end(tid: string): void {
    if (this.slots.get(tid) !== undefined) this.running--;
    this.slots.set(tid, undefined);
  }

  get busy(): number {
    return this.running;
  }

  /**
   * A job's promise runs on after the worker gave up on it (it ignored its abort signal): counted until
   * it settles, in the heartbeat (`abandoned`), so a supervisor can replace a process that piles them up.
   */
  abandon(work: Promise<unknown>): void {
    this.abandonedNow++;
    const settled = () => void this.abandonedNow--;
    work.then(settled, settled);
  }

  /** Abandoned jobs still running. */
  get abandoned(): number {
    return this.abandonedNow;
  }

  /** The jobs running now, by tid (a copy: for the heartbeat, metrics and dumps, not per job). */
  get work(): ReadonlyMap<string, WorkEntry> {
    const now = new Map<string, WorkEntry>();
    for (const [tid, entry] of this.slots) if (entry !== undefined) now.set(tid, entry);
    return now;
  }

  /** The slot running `jid` and its entry, if it runs here now (for a job reporting its progress). */
  slotOf(jid: string): { tid: string; entry: WorkEntry } | undefined {
    for (const [tid, entry] of this.slots) if (entry?.jid === jid) return { tid, entry };
    return undefined;
  }

  countProcessed(failed: boolean): void {
    this.processed++;
    if (failed) this.failed++;
  }

  /** The counts not yet written to Redis, left in place. */
  unflushedCounts(): { processed: number; failed: number } {
    return { processed: this.processed, failed: this.failed };
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
