/**
 * Reliable fetch's upkeep for one worker: registers the process for reliable fetch, recovers the jobs
 * orphaned by processes that died without a supervisor (at the start and every minute), and at the stop
 * puts this process's own leftovers back in their queues.
 */
import type { ServerContext } from "./context.js";
import { recoverIdentity, sweepOrphans } from "./fetch/recovery.js";
import { registerReliable } from "./fetch/registration.js";
import type { StopBudget } from "./StopBudget.js";

/** ms between sweeps for orphaned reliable-fetch jobs of processes that died without a supervisor. */
const ORPHAN_SWEEP_INTERVAL = 60_000;

export class ReliableRecovery {
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Ends a registration for reliable fetch still being retried (fetch/registration.ts). */
  private readonly registration = new AbortController();

  constructor(private readonly ctx: ServerContext) {}

  /** Registers for reliable fetch and recovers orphans now and every minute. */
  async start(): Promise<void> {
    const { redis, options, logger, identity } = this.ctx;
    // A refused write (Redis over maxmemory) must not stop the start: draining the queues frees memory.
    await registerReliable(redis, identity, logger, this.registration.signal);
    const sweep = async () => {
      try {
        await sweepOrphans(redis, identity, options, logger, this.ctx.locks);
      } catch (error) {
        logger.error({ err: error }, "orphan recovery failed; will retry in a minute");
      }
    };
    await sweep();
    this.sweepTimer = setInterval(() => void sweep(), ORPHAN_SWEEP_INTERVAL);
    this.sweepTimer.unref();
  }

  /** Idempotent: no more sweeps, and a registration still being retried gives up. */
  quiet(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.registration.abort();
  }

  /** Anything still in this process's private lists (an ack that failed) goes back to its queue. */
  async stop(budget: StopBudget): Promise<void> {
    const { redis, options, logger, identity } = this.ctx;
    const recovered = await budget.within(redis, () =>
      recoverIdentity(redis, identity, options, logger, this.ctx.locks).catch((error: unknown) =>
        logger.error({ err: error }, "could not requeue this process's leftover in-progress jobs"),
      ),
    );
    if (!recovered)
      logger.warn(
        "Redis unreachable: unfinished jobs stay in this process's private lists; the next reliable process recovers them",
      );
  }
}
