/**
 * `this.progress(n, data?)` inside perform: the job's progress goes into its work entry (the
 * `<identity>:work` hash the Busy page and `tsqctl busy` read) as `"progress":{"n":40,"data":…,"at":<s>}`.
 * Written at once, then at most once a second per job (a call within the second replaces the value and
 * is written when the second is up): a loop reporting each item costs one write a second, not one per
 * item. The heartbeat rewrites the entry with the latest value too, so a lost write heals at the next
 * beat. A job that never reports costs nothing.
 */
import { legacyWorkKey, workKey } from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { ArgumentError } from "../../wire/errors.js";
import { workJson } from "../../server/Heartbeat.js";
import type { ServerContext } from "../../server/context.js";

/** Milliseconds between two writes of one job's progress. */
const MIN_INTERVAL_MS = 1000;
/** Largest `data`, in bytes of JSON: the work hash is read whole by every Busy page view. */
const MAX_DATA_BYTES = 4096;

export interface Progress {
  /** A number the job chooses, usually a percentage (0–100). */
  n: number;
  data?: unknown;
  /** Epoch seconds of the report. */
  at: number;
}

export class ProgressReporter {
  private lastWriteMs = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly ctx: ServerContext,
    private readonly jid: string,
  ) {}

  /** Records the progress now; writes it now or when this job's second is up. */
  report(n: number, data?: unknown): void {
    const progress = checkedProgress(n, data);
    const slot = this.ctx.state.slotOf(this.jid);
    if (!slot || this.closed) return;
    slot.entry.progress = progress;
    if (this.timer) return; // the pending write takes the latest value
    const wait = this.lastWriteMs + MIN_INTERVAL_MS - performance.now();
    if (wait <= 0) this.write();
    else this.timer = setTimeout(() => this.write(), wait);
  }

  /** The job ended: no write after this (the heartbeat drops its entry). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private write(): void {
    this.timer = undefined;
    const slot = this.ctx.state.slotOf(this.jid);
    if (!slot || this.closed) return;
    this.lastWriteMs = performance.now();
    const { redis, identity, options } = this.ctx;
    const json = workJson(slot.entry);
    // EXPIRE as the heartbeat does: a job that started since the last beat may create the hash.
    redis
      .multi()
      .hset(workKey(identity), slot.tid, json)
      .expire(workKey(identity), options.heartbeatTtl)
      .hset(legacyWorkKey(identity), slot.tid, json)
      .expire(legacyWorkKey(identity), options.heartbeatTtl)
      .exec()
      .catch((error: unknown) => this.ctx.logger.warn({ err: error }, "could not write the job's progress"));
  }
}

/** A report as stored (`data` through JSON), or an ArgumentError saying what is wrong with it. */
export function checkedProgress(n: number, data?: unknown): Progress {
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new ArgumentError(`progress(n, data?): n must be a finite number (got ${String(n)})`);
  const progress: Progress = { n, at: nowSeconds() };
  if (data !== undefined) {
    const json = JSON.stringify(data) as string | undefined;
    if (json === undefined || Buffer.byteLength(json) > MAX_DATA_BYTES)
      throw new ArgumentError(`progress(n, data): data must be JSON of at most ${MAX_DATA_BYTES} bytes`);
    progress.data = JSON.parse(json) as unknown;
  }
  return progress;
}
