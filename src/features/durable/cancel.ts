/**
 * `cancel(jid)`: stops a job wherever it is. Waiting in a queue, scheduled, retrying, sleeping or parked:
 * removed from Redis. Running: its owner (found in the `<identity>:work` hashes) is told on its
 * pub/sub channel, which only tsq processes read, and aborts the job's `this.signal`; the job ends as
 * cancelled, not retried. In every case the job's journal is marked, so a durable job that comes back
 * anyway (a copy in flight) ends at once, `cancelled`, without running a step. A journal keeps its own
 * lifetime; a jid without one (a job that never wrote it, or no job at all) gets a mark that lives
 * CANCEL_MARK_TTL only, so cancels of unknown jids leave nothing behind for long.
 */
import type { Redis } from "ioredis";
import { defaultClient } from "../../client/defaultClient.js";
import { ArgumentError } from "../../wire/errors.js";
import {
  CANCEL_BROADCAST,
  PROCESSES,
  QUEUES,
  RETRY,
  SCHEDULE,
  DURABLE_SLEEPING_INDEX,
  DURABLE_WAITING_INDEX,
  cancelChannel,
  durableKey,
  durableWaitersKey,
  queueKey,
  workKey,
} from "../../wire/keys.js";

export interface CancelResult {
  jid: string;
  /** Where copies of the job were removed from: `queue:<name>`, `schedule`, `retry`. */
  removed: string[];
  /** The identity of the process running it, if one does (per the work hashes). */
  runningOn?: string;
  /** How many tsq processes received the cancel (0: no tsq process listens). */
  notified: number;
}

/**
 * Seconds the mark lives on a jid that has no journal (1 hour): long enough for a copy in flight to find
 * it (one fetched but not yet started, one recovered from a dead process's private list a minute or two
 * later), short enough that cancelling unknown jids leaves no lasting keys. EXPIRE NX: an existing
 * journal keeps its TTL (its deadlines and retries set it).
 */
export const CANCEL_MARK_TTL = 3600;

/** Entries read per LRANGE while searching a queue for the jid. */
const QUEUE_PAGE = 1000;

export async function cancel(jid: string, options: { redis?: Redis } = {}): Promise<CancelResult> {
  if (typeof jid !== "string" || !/^[\w.:-]{1,100}$/.test(jid))
    throw new ArgumentError(`cancel(jid) needs a job id such as 3f9a0c1d2e4b5a6978c0d1e2, got ${JSON.stringify(jid)}`);
  const redis = options.redis ?? defaultClient().redis;
  const journal = durableKey(jid);
  const results = await redis
    .multi()
    .hsetnx(journal, "cancelled", Math.floor(Date.now() / 1000))
    .expire(journal, CANCEL_MARK_TTL, "NX")
    .hget(journal, "w")
    // Out of the parked-work gauges at once, not when its deadline or wake time passes.
    .zrem(DURABLE_WAITING_INDEX, jid)
    .zrem(DURABLE_SLEEPING_INDEX, jid)
    .exec();
  const parkedOn: unknown = results?.[2]?.[1];
  if (typeof parkedOn === "string") await redis.hdel(durableWaitersKey(parkedOn), jid);
  const removed: string[] = [];
  for (const set of [SCHEDULE, RETRY]) if (await removeFromSet(redis, set, jid)) removed.push(set);
  for (const queue of await redis.smembers(QUEUES))
    if (await removeFromQueue(redis, queueKey(queue), jid)) removed.push(queueKey(queue));
  const runningOn = await findOwner(redis, jid);
  const notified = await redis.publish(runningOn ? cancelChannel(runningOn) : CANCEL_BROADCAST, jid);
  return runningOn ? { jid, removed, runningOn, notified } : { jid, removed, notified };
}

/** The payload names `jid` (text from Redis is parsed, never trusted). */
function names(text: string, jid: string): boolean {
  if (!text.includes(jid)) return false;
  try {
    return (JSON.parse(text) as { jid?: unknown }).jid === jid;
  } catch {
    return false;
  }
}

async function removeFromSet(redis: Redis, set: string, jid: string): Promise<boolean> {
  let cursor = "0";
  let found = false;
  do {
    const [next, flat] = await redis.zscan(set, cursor, "MATCH", `*${globEscape(jid)}*`, "COUNT", 1000);
    cursor = next;
    for (let i = 0; i < flat.length; i += 2)
      if (names(flat[i]!, jid) && (await redis.zrem(set, flat[i]!)) > 0) found = true;
  } while (cursor !== "0");
  return found;
}

async function removeFromQueue(redis: Redis, key: string, jid: string): Promise<boolean> {
  for (let start = 0; ; start += QUEUE_PAGE) {
    const page = await redis.lrange(key, start, start + QUEUE_PAGE - 1);
    const hit = page.find((text) => names(text, jid));
    if (hit !== undefined) return (await redis.lrem(key, 0, hit)) > 0;
    if (page.length < QUEUE_PAGE) return false;
  }
}

/** The identity whose work hash holds `jid`. */
async function findOwner(redis: Redis, jid: string): Promise<string | undefined> {
  for (const identity of await redis.smembers(PROCESSES)) {
    for (const text of Object.values(await redis.hgetall(workKey(identity)))) {
      if (!text.includes(jid)) continue;
      try {
        const work = JSON.parse(text) as { payload?: unknown };
        const payload = typeof work.payload === "string" ? (JSON.parse(work.payload) as unknown) : work.payload;
        if ((payload as { jid?: unknown } | null)?.jid === jid) return identity;
      } catch {
        // A work entry that is not JSON is another writer's; it cannot name the job.
      }
    }
  }
  return undefined;
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}
