/**
 * ChildReporter: the `tsq-cluster` child's side of /metrics. It sends the supervisor a snapshot of its
 * JobMetrics every second, once more when it stops, and whenever a scrape asks (`{type: "metrics", id}`).
 *
 * The periodic push is what keeps counters from going backwards: a child that hangs or is SIGKILLed
 * cannot answer, so the supervisor serves (and, once the child is dead, keeps) the last snapshot it got.
 * Snapshots are taken one at a time and numbered (`seq`), so a later one never holds smaller counts.
 *
 * Only the first snapshot is full; later ones hold the series changed since the one before (values,
 * not increments), so an idle child sends its few process metrics rather than every series it ever
 * had: with thousands of classes, full snapshots every second cost an idle child ~24% of a core
 * (issue 26). After a send that failed, or when the supervisor asks (it missed one), the next is full.
 */
import { isToChild, type FromChild } from "./ipc.js";
import type { JobMetrics } from "../metrics/JobMetrics.js";

/** ms between pushes: at most this much counting is lost when a child is killed outright. */
export const PUSH_INTERVAL_MS = 1000;
/** ms the final snapshot may take to leave before the child exits anyway. */
const FINAL_SEND_MS = 1000;

export class ChildReporter {
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The next snapshot must hold every series: the supervisor's copy may be missing some. */
  private needFull = true;
  private readonly onMessage = (message: unknown): void => {
    if (!isToChild(message) || message.type !== "metrics") return;
    if (message.full === true) this.needFull = true;
    void this.report(message.id);
  };

  constructor(private readonly metrics: JobMetrics) {}

  start(): void {
    process.on("message", this.onMessage);
    this.timer = setInterval(() => void this.report(undefined), PUSH_INTERVAL_MS);
    this.timer.unref();
    void this.report(undefined);
  }

  /** Idempotent. Sends the final snapshot (after the last job ended) and resolves once it has left. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    process.off("message", this.onMessage);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, FINAL_SEND_MS)));
    await Promise.race([this.report(undefined, true), timeout]);
    clearTimeout(timer);
    this.metrics.stop();
  }

  private report(id: number | undefined, final = false): Promise<void> {
    if (this.stopped && !final) return this.queue;
    this.queue = this.queue
      .then(async () => {
        const { full, families, replaced } = await this.metrics.changes(this.needFull);
        this.needFull = false;
        const message: FromChild = { type: "metrics", seq: ++this.seq, id, full, families };
        if (replaced.length > 0) message.replaced = replaced;
        if (!(await send(message))) this.needFull = true;
      })
      .catch(() => {}); // a closed channel: the supervisor is gone, and with it any reader
    return this.queue;
  }
}

/** Resolves true once the message has left, false if it could not be sent. */
function send(message: FromChild): Promise<boolean> {
  return new Promise((resolve) => {
    if (!process.connected || !process.send) return resolve(false);
    process.send(message, undefined, {}, (error) => resolve(error === null || error === undefined));
  });
}
