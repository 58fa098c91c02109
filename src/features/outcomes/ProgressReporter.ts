/**
 * `this.progress(n, data?)` inside perform: the job's progress goes into its work entry (the
 * `<identity>:work` hash the Busy page and `tsqctl busy` read) as `"progress":{"n":40,"data":…,"at":<s>}`.
 * Written at once, then at most once a second per job (a call within the second replaces the value and
 * is written when the second is up): a loop reporting each item costs one write a second, not one per
 * item. The heartbeat rewrites the entry with the latest value too, so a lost write heals at the next
 * beat. A job that never reports costs nothing.
 *
 * Every call is announced in this process (`ctx.events` "progress", the Worker's `job:progress`). A job
 * whose class opts in to outcomes also announces each write on the outcomes stream, in the same MULTI,
 * for subscribers in any process (`watcher.subscribe({ progress: true }, ...)`):
 *
 *   XADD tsq:outcomes MAXLEN ~ 10000 * jid <jid> class <name> queue <q> progress <n> [data <JSON>]
 *
 * and a report still waiting for its second when the job ends is added then (stream only: the work entry
 * goes with the job), before the end's entry on the same connection. So a subscriber sees the first and
 * the last report, at most one a second between, then the end: 10,000 calls in a burst are 2 entries.
 */
import { OUTCOMES, legacyWorkKey, workKey } from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { ArgumentError } from "../../wire/errors.js";
import { displayClass, type JobPayload } from "../../wire/payload.js";
import { workJson } from "../../server/Heartbeat.js";
import type { ServerContext } from "../../server/context.js";
import { STREAM_LENGTH } from "./OutcomeRecorder.js";

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
  /** The latest report, for the stream entry (the slot may be gone by the time the job's end closes this). */
  private latest: Progress | undefined;
  private readonly jid: string;

  /** `announce`: the job's class opts in to outcomes, so its reports go on the stream too. */
  constructor(
    private readonly ctx: ServerContext,
    private readonly job: JobPayload,
    private readonly queue: string,
    private readonly announce: boolean,
  ) {
    this.jid = job.jid;
  }

  /** Records the progress now; writes it now or when this job's second is up. */
  report(n: number, data?: unknown): void {
    const progress = checkedProgress(n, data);
    const slot = this.ctx.state.slotOf(this.jid);
    if (!slot || this.closed) return;
    slot.entry.progress = this.latest = progress;
    this.ctx.events.emit("progress", this.job, this.queue, progress);
    if (this.timer) return; // the pending write takes the latest value
    const wait = this.lastWriteMs + MIN_INTERVAL_MS - performance.now();
    if (wait <= 0) this.write();
    else this.timer = setTimeout(() => this.write(), wait);
  }

  /** The job ended: no work entry write after this (the heartbeat drops it); a pending report is announced now. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.announce || !this.latest) return;
    this.ctx.redis
      .xadd(OUTCOMES, "MAXLEN", "~", STREAM_LENGTH, "*", ...this.fields(this.latest))
      .catch((error: unknown) => this.ctx.logger.warn({ err: error }, "could not announce the job's progress"));
  }

  private write(): void {
    this.timer = undefined;
    const slot = this.ctx.state.slotOf(this.jid);
    if (!slot || this.closed) return;
    this.lastWriteMs = performance.now();
    const { redis, identity, options } = this.ctx;
    const json = workJson(slot.entry);
    // EXPIRE as the heartbeat does: a job that started since the last beat may create the hash.
    const multi = redis
      .multi()
      .hset(workKey(identity), slot.tid, json)
      .expire(workKey(identity), options.heartbeatTtl)
      .hset(legacyWorkKey(identity), slot.tid, json)
      .expire(legacyWorkKey(identity), options.heartbeatTtl);
    if (this.announce && this.latest)
      multi.xadd(OUTCOMES, "MAXLEN", "~", STREAM_LENGTH, "*", ...this.fields(this.latest));
    multi.exec().catch((error: unknown) => this.ctx.logger.warn({ err: error }, "could not write the job's progress"));
  }

  /** The stream entry's fields for `progress` (its data as JSON text, already checked to be at most 4 KB). */
  private fields(progress: Progress): string[] {
    const { job, queue } = this;
    const fields = ["jid", job.jid, "class", displayClass(job), "queue", queue, "progress", String(progress.n)];
    if (progress.data !== undefined) fields.push("data", JSON.stringify(progress.data));
    return fields;
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
