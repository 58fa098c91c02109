/**
 * DeadChildren: what the supervisor does in Redis for a child that exited. It removes the child from
 * `processes` and deletes its work hashes (so Sidekiq's UI is right at once), releases or nudges the cron
 * leadership, and with reliable fetch puts the jobs it was running back at the front of their queues.
 * A stop waits for the prunes in flight, at most PRUNE_WAIT_MS, and not at all for those whose Redis is
 * unreachable as the stop begins.
 */
import { LEADER, PROCESSES, legacyWorkKey, workKey } from "../wire/keys.js";
import { recoverIdentity } from "../server/fetch/recovery.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { childRedis, type Child, type SupervisorOptions } from "./fleet.js";
import { leaderResignLua } from "../server/scripts.js";

/**
 * ms a stop waits for dead children's records to be pruned. With Redis away the commands wait for a
 * reconnection that may never come: the records then expire by themselves (60 s) and the stop goes on.
 */
const PRUNE_WAIT_MS = 1000;

export class DeadChildren {
  /** Prunes in flight, with the connection each writes through; a stop waits for them. */
  private readonly prunes = new Map<Promise<void>, TsqRedis>();

  constructor(
    private readonly options: SupervisorOptions,
    /** Tells the live children the cron leadership is free (they elect a new leader now). */
    private readonly leaderVacant: () => void,
  ) {}

  /** Starts pruning `child`'s records; never rejects (a failure is logged). */
  prune(child: Child): void {
    const redis = childRedis(this.options, child.slot.plan);
    const pruning = this.pruneRecords(child, redis).finally(() => this.prunes.delete(pruning));
    this.prunes.set(pruning, redis);
  }

  /**
   * The prunes in flight, waited for at most PRUNE_WAIT_MS. Those whose connection is not up now are not
   * waited for: their commands would sit in the offline queue until a reconnection the stop ends first.
   */
  async settled(): Promise<void> {
    const reachable = [...this.prunes].filter(([, redis]) => redis.status === "ready").map(([pruning]) => pruning);
    if (reachable.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, PRUNE_WAIT_MS)));
    await Promise.race([Promise.all(reachable), late]);
    clearTimeout(timer);
  }

  private async pruneRecords(child: Child, redis: TsqRedis): Promise<void> {
    const { identity } = child;
    if (!identity) return;
    const { logger, worker } = this.options;
    try {
      await redis.multi().srem(PROCESSES, identity).unlink(workKey(identity), legacyWorkKey(identity)).exec();
      // A dead leader's record would block periodic jobs until it expires (leaderTtl, 60 s); one that
      // stepped down on its way out leaves followers waiting for their next check. Either way, nudge them.
      if ((await leaderResignLua.run(redis, LEADER, identity)) === 1) {
        logger.warn(
          { identity },
          "the dead child was the cron leader; released its record, the other children elect a new one now",
        );
        this.leaderVacant();
      } else if ((await redis.exists(LEADER)) === 0) {
        this.leaderVacant();
      }
      const release = this.options.releaseLocks;
      const locks = release && {
        release: async (stored: Iterable<unknown>) => void (await release(redis, [...stored] as Buffer[])),
      };
      if (worker.fetch === "reliable") await recoverIdentity(redis, identity, worker, logger, locks);
    } catch (error) {
      logger.error(
        { err: error, identity },
        "could not prune a dead child's records; they expire in 60 s and its jobs are recovered by the next sweep",
      );
    }
  }
}
