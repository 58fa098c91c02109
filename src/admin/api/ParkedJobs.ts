/**
 * Durable jobs parked in `schedule` (docs/durable.md): waiting on an event, or sleeping. Both are ordinary
 * scheduled entries to Sidekiq's readers; what tells them apart is the job's journal:
 *
 *   127.0.0.1:6379> ZRANGE schedule 0 -1 WITHSCORES
 *   1) "{\"class\":\"OrderJob\",\"jid\":\"3f9a0c1d2e4b5a6978c0d1e2\",...}"   2) "1764707400"
 *   127.0.0.1:6379> HMGET tsq:durable:3f9a0c1d2e4b5a6978c0d1e2 w ws done cancelled
 *   1) "shipped:42"   2) "1764621000.5"   3) (nil)   4) (nil)
 *
 * A journal with `w` (the event) and `ws` (since, epoch s): waiting, until the entry's score (the
 * deadline; 0 once signalled, until the poller moves it). A journal without `w`, not done or cancelled:
 * sleeping until the score. An entry with no journal is a plain scheduled job and is not listed.
 * Everything returned is text from Redis: a caller that prints it escapes it.
 */
import type { Redis } from "ioredis";
import { SCHEDULE, durableKey } from "../../wire/keys.js";
import { JobRecord } from "./JobRecord.js";

export interface WaitingJob {
  jid: string;
  class: string;
  queue: string;
  /** The event the job waits for. */
  event: string;
  /** Epoch seconds the job first parked on the event. */
  since: number;
  /** Epoch seconds it times out at; 0: signalled, due at the next poll. */
  deadline: number;
}

export interface SleepingJob {
  jid: string;
  class: string;
  queue: string;
  /** Epoch seconds it wakes at. */
  wakeAt: number;
}

export interface ParkedList {
  waiting: WaitingJob[];
  sleeping: SleepingJob[];
  /** More durable jobs are parked than `limit` allowed listing. */
  truncated: boolean;
}

/** `schedule` entries read per round trip. */
const PAGE = 1000;

export class ParkedJobs {
  constructor(private readonly redis: Redis) {}

  /**
   * The durable jobs in `schedule`, soonest first, at most `limit` of each kind. Reads the whole
   * schedule page by page (ZRANGE + one pipelined HMGET per entry): O(scheduled jobs).
   */
  async list({ limit = 1000 }: { limit?: number } = {}): Promise<ParkedList> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
    const found: ParkedList = { waiting: [], sleeping: [], truncated: false };
    for (let start = 0; ; start += PAGE) {
      const flat = await this.redis.zrange(SCHEDULE, start, start + PAGE - 1, "WITHSCORES");
      const entries: { job: JobRecord; jid: string; score: number }[] = [];
      for (let i = 0; i < flat.length; i += 2) {
        const job = new JobRecord(flat[i]!);
        const jid = job.jid;
        if (typeof jid === "string" && jid !== "") entries.push({ job, jid, score: Number(flat[i + 1]) });
      }
      const pipeline = this.redis.pipeline();
      for (const { jid } of entries)
        pipeline.hmget(durableKey(jid), "w", "ws", "done", "cancelled").exists(durableKey(jid));
      const results = (await pipeline.exec()) ?? [];
      entries.forEach(({ job, jid, score }, i) => {
        const [error, fields] = results[i * 2] ?? [];
        const exists = results[i * 2 + 1]?.[1] === 1;
        if (error || !exists || !Array.isArray(fields)) return;
        const [event, since, done, cancelled] = fields as (string | null)[];
        const common = { jid, class: job.displayClass ?? job.klass ?? "", queue: job.queue };
        if (typeof event === "string") {
          if (found.waiting.length >= limit) return void (found.truncated = true);
          found.waiting.push({ ...common, event, since: Number(since) || 0, deadline: score });
        } else if (done === null && cancelled === null) {
          if (found.sleeping.length >= limit) return void (found.truncated = true);
          found.sleeping.push({ ...common, wakeAt: score });
        }
      });
      if (flat.length < PAGE * 2) return found;
    }
  }
}
