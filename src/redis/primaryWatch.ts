/**
 * Says once per process when Sentinel moved the primary. Every connection of a `redis+sentinel://` URL
 * reports the address it reached at each (re)connect; a failover makes all of them reconnect (Sentinel
 * kills the old primary's clients when it demotes it), and the first to reach the new primary logs
 * one line. The others find the address already known and stay silent.
 */
import { logger } from "../logger.js";
import type { Redis } from "ioredis";

/** Last primary address seen, per Sentinel set and master name. */
const primaries = new Map<string, string>();

function addressOf(redis: Redis): string | undefined {
  const stream = (redis as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
  return stream?.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort ?? "?"}` : undefined;
}

/** Follows `redis`'s reconnects; `key` names the Sentinel set and master, `masterName` is for the log. */
export function watchPrimary(redis: Redis, key: string, masterName: string): void {
  redis.on("ready", () => {
    const address = addressOf(redis);
    if (address === undefined) return;
    const previous = primaries.get(key);
    if (previous === address) return;
    primaries.set(key, address);
    if (previous === undefined) {
      logger().info({ master: masterName, primary: address }, `Sentinel: primary of "${masterName}" is ${address}`);
    } else {
      logger().warn(
        { master: masterName, primary: address, previous },
        `Sentinel failover: primary of "${masterName}" moved from ${previous} to ${address}; connections follow it, no restart needed`,
      );
    }
  });
}
