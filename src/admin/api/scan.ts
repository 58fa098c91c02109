/** Reading whole sets with SSCAN, as Sidekiq's API does (SMEMBERS would block Redis on a huge set). */
import type { Redis } from "ioredis";
import { PROCESSES, QUEUES } from "../../wire/keys.js";

export async function sscanAll(redis: Redis, key: string): Promise<string[]> {
  const members = new Set<string>();
  let cursor = "0";
  do {
    const [next, batch] = await redis.sscan(key, cursor, "COUNT", 1000);
    for (const member of batch) members.add(member);
    cursor = next;
  } while (cursor !== "0");
  return [...members];
}

/** Names in the `queues` set (without the `queue:` prefix), unsorted. */
export function queueNames(redis: Redis): Promise<string[]> {
  return sscanAll(redis, QUEUES);
}

/** Identities in the `processes` set, sorted as Sidekiq sorts them. */
export async function processIdentities(redis: Redis): Promise<string[]> {
  return (await sscanAll(redis, PROCESSES)).sort();
}
