/**
 * PassLoop: the shape of every "do a pass, sleep until the next one is due" role (the cron scheduler,
 * the sidekiq-cron poller): start once, stop idempotently and at once (the sleep is cancellable), and a
 * pass that throws is reported, not fatal, and retried after the fallback wait.
 */
import type { Logger } from "../logger.js";
import { ProblemLog } from "../redis/errors.js";
import { sleep } from "./sleep.js";
import type { Clock } from "./clock.js";

export abstract class PassLoop {
  protected readonly stopController = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly problems: ProblemLog;

  /**
   * @param what       the activity, for logs ("periodic job pass")
   * @param fallbackMs ms to wait after a failed pass
   * @param clock      whose time the waits between passes take
   */
  constructor(
    what: string,
    logger: Logger,
    private readonly fallbackMs: () => number,
    private readonly clock: Clock,
  ) {
    this.problems = new ProblemLog(what, logger);
  }

  /** One pass; resolves to the milliseconds until the next one is due. */
  abstract pass(): Promise<number>;

  start(): void {
    if (this.stopController.signal.aborted) return;
    this.loop ??= this.run();
  }

  /** Idempotent; wakes the sleeping loop at once. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      let wait = this.fallbackMs();
      try {
        wait = await this.pass();
        this.problems.succeeded();
      } catch (error) {
        if (signal.aborted) return;
        this.problems.failed(error, "retrying");
      }
      await sleep(wait, signal, this.clock);
    }
  }
}
