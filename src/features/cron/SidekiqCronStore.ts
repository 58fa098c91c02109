/**
 * sidekiq-cron's (1.8.0) schedules in Redis, read and updated as its `Sidekiq::Cron::Job` does. A
 * schedule saved by Ruby looks like:
 *
 *   SMEMBERS cron_jobs                  cron_job:nightly  cron_job:report        (hash keys, not names)
 *   HGETALL cron_job:nightly
 *     name nightly   klass TickJob   cron "0 3 * * * Europe/Paris"   description ""   args ["x",1]
 *     message {"queue":"cronq","class":"TickJob","args":["x",1]}   status enabled   active_job false
 *     date_as_argument false   symbolize_args false   queue_name_prefix ""   queue_name_delimiter ""
 *     last_enqueue_time "2026-11-23 02:00:01 +0000"
 *   ZRANGE cron_job:nightly:enqueued 0 -1 WITHSCORES     2026-11-23T02:00:00Z 1795399200.0
 *   LRANGE cron_job:nightly:jid_history 0 -1             {"jid":"4481…","enqueued":"2026-11-23 02:00:01 +0000"}
 *
 * Everything read here is hostile text: a malformed field falls back to sidekiq-cron's default rather
 * than failing the listing or the poller.
 */
import {
  SIDEKIQ_CRON_JOBS,
  sidekiqCronEnqueuedKey,
  sidekiqCronHistoryKey,
  sidekiqCronJobKey,
} from "../../wire/keys.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { formatEnqueueTime, parseEnqueueTime, tickMember, tickScore } from "./sidekiqCronTimes.js";

export interface SidekiqCronSchedule {
  name: string;
  /** As stored, a trailing time zone included (`0 3 * * * Europe/Paris`). */
  cron: string;
  /** The class name (`klass`). */
  klass: string;
  /** The job's arguments (sidekiq-cron's `parse_args`: a JSON array, a hash as one argument, else the text). */
  args: unknown[];
  /** The stored Sidekiq message (class, queue, options), or undefined when it is not a JSON object. */
  message: Record<string, unknown> | undefined;
  queue: string;
  description: string | undefined;
  /** `status` is "enabled". */
  enabled: boolean;
  /** Enqueue through ActiveJob (`active_job: true`). */
  activeJob: boolean;
  /** Append the enqueue time (epoch seconds, float) to the arguments. */
  dateAsArgument: boolean;
  /** Give hash arguments Symbol keys (ActiveJob only; JSON cannot tell them apart otherwise). */
  symbolizeArgs: boolean;
  queueNamePrefix: string | undefined;
  queueNameDelimiter: string | undefined;
  /** Epoch seconds of the last push (`last_enqueue_time`), by any process. */
  lastEnqueueTime: number | undefined;
}

/** How many pushes `jid_history` keeps (sidekiq-cron's `cron_history_size` default). */
const HISTORY_SIZE = 10;
/** Seconds `:enqueued` remembers a tick (sidekiq-cron's REMEMBER_THRESHOLD, 24 hours). */
const REMEMBER_SECONDS = 24 * 60 * 60;

export class SidekiqCronStore {
  constructor(private readonly redis: TsqRedis) {}

  /** Every schedule, by name. */
  async list(): Promise<SidekiqCronSchedule[]> {
    const keys = await this.redis.smembers(SIDEKIQ_CRON_JOBS);
    const read = this.redis.pipeline();
    for (const key of keys) read.hgetall(key);
    const rows = (await read.exec()) ?? [];
    const schedules = rows.flatMap(([error, hash]) => {
      const fields = error ? null : (hash as Record<string, string> | null);
      return fields?.name ? [fromHash(fields)] : [];
    });
    return schedules.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async get(name: string): Promise<SidekiqCronSchedule | undefined> {
    const hash = await this.redis.hgetall(sidekiqCronJobKey(name));
    return hash.name ? fromHash(hash) : undefined;
  }

  /** The jid of the latest push, from `jid_history`. */
  async lastJid(name: string): Promise<string | undefined> {
    const entry = await this.redis.lindex(sidekiqCronHistoryKey(name), 0);
    const parsed = json(entry ?? "null") as { jid?: unknown } | null;
    return typeof parsed?.jid === "string" ? parsed.jid : undefined;
  }

  /** `disable!` / `enable!`: sets `status`. Resolves false when no schedule has that name. */
  async setEnabled(name: string, enabled: boolean): Promise<boolean> {
    const key = sidekiqCronJobKey(name);
    if (!(await this.redis.hexists(key, "name"))) return false;
    await this.redis.hset(key, "status", enabled ? "enabled" : "disabled");
    return true;
  }

  /**
   * Claims `tick` as sidekiq-cron's `should_enque?` does: ZADD of the tick's member, which only the
   * first process adds. Resolves true when this process must push the job.
   */
  async claim(name: string, tick: number): Promise<boolean> {
    return (await this.redis.zadd(sidekiqCronEnqueuedKey(name), tickScore(tick), tickMember(tick))) === 1;
  }

  /**
   * After a push, as `enque!` and `remove_previous_enques`: `last_enqueue_time`, the jid history (10
   * newest) and the forgetting of ticks older than 24 hours. Skipped if the schedule was deleted meanwhile.
   */
  async recordEnqueue(name: string, jid: string | null, now: number): Promise<void> {
    const key = sidekiqCronJobKey(name);
    if (!(await this.redis.exists(key))) return;
    const enqueued = formatEnqueueTime(now);
    await this.redis
      .multi()
      .hset(key, "last_enqueue_time", enqueued)
      .lpush(sidekiqCronHistoryKey(name), JSON.stringify({ jid, enqueued }))
      .ltrim(sidekiqCronHistoryKey(name), 0, HISTORY_SIZE - 1)
      .zremrangebyscore(sidekiqCronEnqueuedKey(name), 0, `(${now - REMEMBER_SECONDS}`)
      .exec();
  }
}

/** sidekiq-cron's truthy text: true, t, yes, y, 1 (any case). */
function flag(text: string | undefined): boolean {
  return /^(true|t|yes|y|1)$/i.test(text ?? "");
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseArgs(text: string | undefined): unknown[] {
  if (text === undefined || text === "") return [];
  const parsed = json(text);
  if (parsed === undefined) return [text];
  if (Array.isArray(parsed)) return parsed as unknown[];
  return [parsed];
}

function fromHash(h: Record<string, string>): SidekiqCronSchedule {
  const message = json(h.message ?? "");
  const messageObject =
    message !== null && typeof message === "object" && !Array.isArray(message)
      ? (message as Record<string, unknown>)
      : undefined;
  const queue =
    typeof messageObject?.queue === "string" && messageObject.queue !== "" ? messageObject.queue : "default";
  const text = (field: string) => (h[field] ? h[field] : undefined);
  return {
    name: h.name ?? "",
    cron: h.cron ?? "",
    klass: h.klass || (typeof messageObject?.class === "string" ? messageObject.class : ""),
    args: parseArgs(h.args),
    message: messageObject,
    queue,
    description: text("description"),
    enabled: (h.status ?? "enabled") === "enabled",
    activeJob: flag(h.active_job),
    dateAsArgument: flag(h.date_as_argument),
    symbolizeArgs: flag(h.symbolize_args),
    queueNamePrefix: text("queue_name_prefix"),
    queueNameDelimiter: text("queue_name_delimiter"),
    lastEnqueueTime: parseEnqueueTime(h.last_enqueue_time),
  };
}
