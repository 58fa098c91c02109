/**
 * Pacer: spreads a bulk action over time, at most `perSecond` entries a second, so retrying 50,000 dead
 * jobs does not land 50,000 jobs on the workers (and whatever they call) at once. Batches shrink to about
 * a tenth of a second's worth, each taken when the pace allows; an abort ends the walk at the next batch
 * (what was already taken is still acted on). Without a pace it only reports progress.
 */
import { sleep } from "../../platform/util/sleep.js";

export interface PaceOptions {
  /** Entries a second at most (> 0); undefined: as fast as Redis and the client go. */
  perSecond?: number;
  /** Stops taking more batches when aborted. */
  signal?: AbortSignal;
  /** Called with the running count of entries acted on, after each batch. */
  onProgress?(done: number): void;
}

/** Batches per second at a given pace: small enough to keep the flow smooth, large enough to pipeline. */
const BATCHES_PER_SECOND = 10;

export class Pacer {
  private readonly started = performance.now();
  private taken = 0;

  constructor(
    private readonly maxBatch: number,
    private readonly options: PaceOptions = {},
  ) {
    const pace = options.perSecond;
    if (pace !== undefined && !(pace > 0 && Number.isFinite(pace)))
      throw new RangeError(`a pace must be a number of entries per second above 0, got ${pace}`);
  }

  /** Entries to take in the next batch. */
  get batchSize(): number {
    const pace = this.options.perSecond;
    return pace === undefined
      ? this.maxBatch
      : Math.min(this.maxBatch, Math.max(1, Math.ceil(pace / BATCHES_PER_SECOND)));
  }

  get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  /** Waits until the pace allows the next batch (at once without a pace); wakes early on abort. */
  async ready(): Promise<void> {
    const pace = this.options.perSecond;
    if (pace === undefined) return;
    const due = this.started + (this.taken / pace) * 1000; // ms on the monotonic clock
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait, this.options.signal);
  }

  /** Counts entries taken (popped) for the pace. */
  took(count: number): void {
    this.taken += count;
  }

  progress(done: number): void {
    this.options.onProgress?.(done);
  }
}

/** Entries `paceEach` acts on concurrently at most. */
const EACH_BATCH = 100;

/**
 * Calls `act` on each item, at most `perSecond` a second (a group of entries rather than a whole set);
 * resolves to how many it returned true for. An abort stops it before the next batch.
 */
export async function paceEach<T>(
  items: readonly T[],
  pace: PaceOptions,
  act: (item: T) => Promise<boolean>,
): Promise<number> {
  const pacer = new Pacer(EACH_BATCH, pace);
  let done = 0;
  for (let i = 0; i < items.length;) {
    await pacer.ready();
    if (pacer.stopped) break;
    const batch = items.slice(i, i + pacer.batchSize);
    i += batch.length;
    pacer.took(batch.length);
    for (const ok of await Promise.all(batch.map(act))) if (ok) done++;
    pacer.progress(done);
  }
  return done;
}
