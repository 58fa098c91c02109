/**
 * A reliable-fetch process's entry in `super_processes` (the set orphan sweeps read). Written at start;
 * when Redis refuses it (over `maxmemory` with noeviction: "OOM command not allowed"), the process
 * still starts and drains its queues, which is what frees the memory, and the write is retried with
 * back-off until it lands. Until then a sweep by another process cannot find this one's private lists
 * if it dies; the tsq-cluster supervisor still recovers its children by identity.
 */
import { SUPER_PROCESSES } from "../../wire/keys.js";
import type { Logger } from "../../platform/logger.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { sleep } from "../../platform/util/sleep.js";

/** First retry after this many ms, doubling up to REGISTER_RETRY_MAX_MS. */
const REGISTER_RETRY_MS = 1_000;
const REGISTER_RETRY_MAX_MS = 60_000;

/**
 * Adds `identity` to `super_processes`. Resolves after the first attempt; a refused write goes on in the
 * background (ended by `signal`), logged once when refused and once when it lands.
 */
export async function registerReliable(
  redis: TsqRedis,
  identity: string,
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  const attempt = async (): Promise<unknown> => {
    try {
      await redis.sadd(SUPER_PROCESSES, identity);
      return undefined;
    } catch (error) {
      return error;
    }
  };
  const first = await attempt();
  if (first === undefined) return;
  logger.warn(
    { err: first, key: SUPER_PROCESSES, identity },
    "could not register this process for reliable fetch (Redis refused the write); starting anyway to drain " +
      "the queues, retrying the registration with back-off",
  );
  void (async () => {
    let wait = REGISTER_RETRY_MS;
    for (let tries = 2; !signal.aborted; tries++) {
      await sleep(wait, signal);
      if (signal.aborted) return;
      if ((await attempt()) === undefined) {
        logger.info({ key: SUPER_PROCESSES, identity, tries }, "registered for reliable fetch");
        return;
      }
      wait = Math.min(wait * 2, REGISTER_RETRY_MAX_MS);
    }
  })();
}
