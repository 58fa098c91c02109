/**
 * The periodic schedules as stored in Redis, shared by the leader (which writes them) and `tsqctl cron`
 * (which reads them and flips `enabled`). One hash per schedule, e.g. after a few ticks:
 *
 *   HGETALL tsq:cron:nightly
 *     name nightly   cron "0 3 * * *"   class ReportJob   queue low   args ["daily"]   tz Asia/Tokyo
 *     description ""   catch_up false   source config/tsq.yml
 *     job_options {"retry":3}   the class's `static options` on the wire, so `tsqctl cron enqueue` pushes alike
 *     enabled true          the operator's switch (`tsqctl cron disable|enable`)
 *     config_enabled true   the config's `enabled` when last synced; a change there resets `enabled`
 *     since 1795200000      epoch s the schedule was first stored; no tick before it is ever run
 *     cursor 1795237200     epoch s of the latest tick dealt with (claimed, skipped); moves forward only
 *     last_run 1795237200.0123   last_tick 1795237200   last_jid 5f0c...   next_run 1795323600
 *
 * Numbers are epoch seconds; `last_run` is when the job was pushed, `last_tick` the tick it was for.
 */
import { CRON_SCHEDULES, QUEUES, cronScheduleKey, cronTickKey, queueKey } from "../../wire/keys.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import type { CronEntry } from "../../platform/config/cronEntry.js";
import { localTimeZone } from "./expression.js";
import { cronClaimLua } from "./scripts.js";

export interface StoredSchedule {
  name: string;
  cron: string;
  class: string;
  queue: string | undefined;
  args: unknown[];
  tz: string;
  description: string | undefined;
  enabled: boolean;
  catchUp: boolean;
  source: string;
  /** The job class's wire options (snake_case), merged under the schedule's fields when pushing. */
  jobOptions: Record<string, unknown>;
  since: number | undefined;
  cursor: number | undefined;
  lastRun: number | undefined;
  lastTick: number | undefined;
  lastJid: string | undefined;
  nextRun: number | undefined;
}

/** A schedule as the leader stores it: the queue resolved and the class's wire options attached. */
export interface SyncedEntry extends CronEntry {
  jobOptions: Record<string, unknown>;
}

/** push: enqueue the job · taken: another process has it · disabled: skipped · gone: schedule removed. */
export interface CronClaimCall {
  /** The schedule's name. */
  name: string;
  /** The tick claimed, integer epoch seconds. */
  tick: number;
  /** This process's identity, stored as the claim's value (for debugging). */
  identity: string;
  /** Seconds the claim key lives: long enough that no leader replays the tick while it exists. */
  ttlSeconds: number;
  /** The job to push with the claim (serialized, for `queue`); absent: claim only. */
  job?: { queue: string; json: string };
}

export type ClaimResult = "push" | "taken" | "disabled" | "gone";
const CLAIM_RESULTS: Record<string, ClaimResult> = { "1": "push", "0": "taken", "2": "disabled", "-1": "gone" };

export class CronStore {
  constructor(private readonly redis: TsqRedis) {}

  /**
   * Makes Redis hold exactly `entries` (a new leader's view wins; schedules it does not declare are
   * removed) and returns, per schedule, the tick after which it resumes: the stored cursor, else the
   * time it was first stored, else `now`.
   */
  async sync(entries: readonly SyncedEntry[], now: number): Promise<Map<string, number>> {
    const stale = new Set(await this.redis.smembers(CRON_SCHEDULES));
    const read = this.redis.pipeline();
    for (const entry of entries) read.hmget(cronScheduleKey(entry.name), "config_enabled", "since", "cursor");
    const rows = ((await read.exec()) ?? []).map(([error, row]) => {
      if (error) throw error;
      return row as (string | null)[];
    });
    const write = this.redis.multi();
    const resume = new Map<string, number>();
    entries.forEach((entry, i) => {
      const [configEnabled, since, cursor] = rows[i] ?? [];
      stale.delete(entry.name);
      const fields: Record<string, string> = {
        name: entry.name,
        cron: entry.cron,
        class: entry.class,
        queue: entry.queue ?? "",
        args: JSON.stringify(entry.args),
        tz: entry.tz ?? localTimeZone(),
        description: entry.description ?? "",
        catch_up: String(entry.catchUp),
        source: entry.source,
        job_options: JSON.stringify(entry.jobOptions),
        config_enabled: String(entry.enabled),
      };
      if (configEnabled !== String(entry.enabled)) fields.enabled = String(entry.enabled);
      if (!since) fields.since = String(now);
      write.hset(cronScheduleKey(entry.name), fields);
      resume.set(entry.name, Number(cursor || since || now));
    });
    if (entries.length > 0) write.sadd(CRON_SCHEDULES, ...entries.map((e) => e.name));
    if (stale.size > 0) {
      write.srem(CRON_SCHEDULES, ...stale);
      write.del(...[...stale].map(cronScheduleKey));
    }
    await write.exec();
    return resume;
  }

  /**
   * Claims `call.tick` for `call.name` and, when claimed, pushes `call.job` in the same atomic step (see
   * cron-claim-4.lua), the one typed call of that script. Without a job it only claims.
   */
  async claim(call: CronClaimCall): Promise<ClaimResult> {
    const { name, tick, job } = call;
    const queue = job?.queue ?? "";
    const result = await cronClaimLua.run(
      this.redis,
      cronScheduleKey(name),
      cronTickKey(name, tick),
      QUEUES,
      queueKey(queue),
      tick,
      call.identity,
      call.ttlSeconds,
      queue,
      job?.json ?? "",
    );
    return CLAIM_RESULTS[String(result)] ?? "taken";
  }

  /** Records a push: the scheduler's (with its tick) or a manual `tsqctl cron enqueue`. */
  async recordRun(name: string, run: { jid: string; at: number; tick?: number; nextRun?: number }): Promise<void> {
    const fields: Record<string, string> = { last_run: String(run.at), last_jid: run.jid };
    if (run.tick !== undefined) fields.last_tick = String(run.tick);
    if (run.nextRun !== undefined) fields.next_run = String(run.nextRun);
    // Only while the schedule exists: a push racing its removal must not resurrect a partial hash.
    if (await this.redis.exists(cronScheduleKey(name))) await this.redis.hset(cronScheduleKey(name), fields);
  }

  async setNextRun(name: string, nextRun: number | undefined): Promise<void> {
    if (nextRun === undefined) await this.redis.hdel(cronScheduleKey(name), "next_run");
    else await this.redis.hset(cronScheduleKey(name), "next_run", String(nextRun));
  }

  /** Sets the operator's switch. Resolves false when no schedule has that name. */
  async setEnabled(name: string, enabled: boolean): Promise<boolean> {
    if (!(await this.redis.sismember(CRON_SCHEDULES, name))) return false;
    await this.redis.hset(cronScheduleKey(name), "enabled", String(enabled));
    return true;
  }

  async get(name: string): Promise<StoredSchedule | undefined> {
    const hash = await this.redis.hgetall(cronScheduleKey(name));
    return hash.name === undefined ? undefined : fromHash(hash);
  }

  /** Every stored schedule, by name. */
  async list(): Promise<StoredSchedule[]> {
    const names = (await this.redis.smembers(CRON_SCHEDULES)).sort();
    const read = this.redis.pipeline();
    for (const name of names) read.hgetall(cronScheduleKey(name));
    const rows = (await read.exec()) ?? [];
    return rows.flatMap(([, hash]) => {
      const fields = hash as Record<string, string> | null;
      return fields?.name === undefined ? [] : [fromHash(fields)];
    });
  }
}

function fromHash(h: Record<string, string>): StoredSchedule {
  const number = (field: string) => (h[field] ? Number(h[field]) : undefined);
  const text = (field: string) => (h[field] ? h[field] : undefined);
  const args = json(h.args);
  const options = json(h.job_options);
  return {
    name: h.name ?? "",
    cron: h.cron ?? "",
    class: h.class ?? "",
    queue: text("queue"),
    args: Array.isArray(args) ? (args as unknown[]) : [],
    tz: h.tz || localTimeZone(),
    description: text("description"),
    enabled: h.enabled !== "false",
    catchUp: h.catch_up === "true",
    source: h.source ?? "",
    jobOptions:
      options !== null && typeof options === "object" && !Array.isArray(options)
        ? (options as Record<string, unknown>)
        : {},
    since: number("since"),
    cursor: number("cursor"),
    lastRun: number("last_run"),
    lastTick: number("last_tick"),
    lastJid: text("last_jid"),
    nextRun: number("next_run"),
  };
}

function json(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? "null");
  } catch {
    return null; // a hand-edited hash: show defaults rather than fail the whole listing
  }
}
