/**
 * PacedRetries: "retry all" at N jobs a second, run in the background of the web process so a retry of
 * 50,000 dead jobs neither stampedes the workers nor holds a request open. Each retry shows its
 * progress on `/bulk` and can be cancelled there; a cancel (or the server stopping) ends it between
 * batches, and entries not yet taken stay in their set. The list lives in this process only: another
 * web process behind the same host name does not see it.
 */
import { randomBytes } from "node:crypto";
import type { PaceOptions } from "../api/Pacer.js";
import { redactText } from "../../platform/secrets.js";

export interface PacedRetry {
  id: string;
  /** The set's page path (`retries`, `morgue`) and title. */
  path: string;
  title: string;
  /** Jobs a second at most. */
  perSecond: number;
  /** Entries in the set when it started (entries added later wait for another retry). */
  total: number;
  done: number;
  state: "running" | "done" | "cancelled" | "failed";
  /** Why it failed (what is not retried stays in the set). */
  error?: string;
  user: string;
  /** Epoch ms. */
  startedAt: number;
  finishedAt?: number;
}

/** Finished retries kept for the page. */
const KEEP_FINISHED = 20;

type Audit = (action: string, target: string, count: number) => void;

/** What to retry: the set it works on (one paced retry per set at a time), how many, and the work. */
export interface PacedWork {
  /** The set's page path (`retries`, `morgue`). */
  path: string;
  /** What the page and the audit lines call it ("Dead", "Dead: Timeout: after N ms"). */
  title: string;
  total: number;
  perSecond: number;
  user: string;
  audit: Audit;
  /** Retries at the pace given, stops when its signal aborts; resolves to the count retried. */
  run(pace: PaceOptions): Promise<number>;
}

export class PacedRetries {
  private readonly retries = new Map<string, PacedRetry>();
  private readonly controllers = new Map<string, AbortController>();
  private readonly running = new Map<string, Promise<void>>();

  /** Starts `work` in the background; refuses while another paced retry runs on the same set. */
  start(work: PacedWork): PacedRetry {
    const { path, title, perSecond, user, audit } = work;
    if (this.list().some((r) => r.state === "running" && r.path === path))
      throw new Error(`a paced retry in /${path} is already running; cancel it first`);
    const retry: PacedRetry = {
      id: randomBytes(6).toString("hex"),
      path,
      title,
      perSecond,
      total: work.total,
      done: 0,
      state: "running",
      user,
      startedAt: Date.now(),
    };
    const controller = new AbortController();
    this.retries.set(retry.id, retry);
    this.controllers.set(retry.id, controller);
    audit(`paced retry at ${perSecond}/s`, title, retry.total);
    const run = work
      .run({ perSecond, signal: controller.signal, onProgress: (done) => (retry.done = done) })
      .then(
        (done) => {
          retry.done = done;
          retry.state = controller.signal.aborted ? "cancelled" : "done";
        },
        (error: unknown) => {
          retry.state = "failed";
          retry.error = redactText(error instanceof Error ? error.message : String(error));
        },
      )
      .finally(() => {
        retry.finishedAt = Date.now();
        this.controllers.delete(retry.id);
        this.running.delete(retry.id);
        audit(`paced retry ${retry.state}`, title, retry.done);
        this.prune();
      });
    this.running.set(retry.id, run);
    return retry;
  }

  /** Ends a running retry between batches; false when there is none with that id. */
  cancel(id: string): boolean {
    const controller = this.controllers.get(id);
    if (!controller) return false;
    controller.abort();
    return true;
  }

  /** Newest first. */
  list(): PacedRetry[] {
    return [...this.retries.values()].sort((a, b) => b.startedAt - a.startedAt);
  }

  /** Cancels every running retry and waits for their last batches (before the Redis connection closes). */
  async stop(): Promise<void> {
    for (const controller of this.controllers.values()) controller.abort();
    await Promise.all(this.running.values());
  }

  private prune(): void {
    const finished = this.list().filter((r) => r.state !== "running");
    for (const old of finished.slice(KEEP_FINISHED)) this.retries.delete(old.id);
  }
}
