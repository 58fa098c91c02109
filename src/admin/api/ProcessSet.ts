/**
 * The live processes, as `Sidekiq::ProcessSet` and `Sidekiq::Process`: every identity in `processes`
 * whose heartbeat hash has not expired, with its `info` JSON merged with the fields the heartbeat
 * rewrites every beat. Remote control is `<identity>-signals` (reference §1.5).
 */
import type { Redis } from "ioredis";
import { LEADER, PROCESSES, PROCESS_CLEANUP, processKey, signalsKey } from "../../wire/keys.js";
import { processIdentities } from "./scan.js";

/** What `quiet`, `stop` and `dumpThreads` push; the process acts at its next heartbeat (≤ 10 s, 5 s in 6.x). */
export type ProcessSignal = "TSTP" | "TERM" | "TTIN";

/** Seconds a pushed signal waits for its process to pop it (Sidekiq: 60, the heartbeat TTL). */
const SIGNAL_TTL = 60;
/** Seconds the `process_cleanup` lock is held: pruning runs at most once a minute cluster-wide. */
const CLEANUP_LOCK_TTL = 60;

export interface ProcessRecord {
  identity: string;
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  /** Queue names, from `info.queues` (every Sidekiq version writes it). */
  queues: string[];
  /** `info.version` (Sidekiq >= 7; tsq writes `tsq <version>`), or null. */
  version: string | null;
  embedded: boolean;
  /** Epoch seconds the process started. */
  startedAt: number;
  /** Job slots: the top-level `concurrency` field (Sidekiq >= 8.1.2, tsq), else `info.concurrency`. */
  concurrency: number;
  /** Jobs running at the last heartbeat. */
  busy: number;
  /** Epoch seconds of the last heartbeat. */
  beat: number;
  /** True once the process is quiet or stopping (`quiet` field is "true"). */
  quiet: boolean;
  /** Resident memory in KB. */
  rssKb: number;
  /** Microseconds of the heartbeat's PING. */
  rttUs: number;
  /** True when this identity holds `dear-leader` (Sidekiq Enterprise). */
  leader: boolean;
  /** The `info` JSON as stored, including `weights` and `capsules` when present. */
  info: Record<string, unknown>;
}

const FIELDS = ["info", "busy", "beat", "quiet", "rss", "rtt_us", "concurrency"] as const;

function num(value: unknown): number {
  const n = typeof value === "number" ? value : Number(value ?? NaN);
  return Number.isFinite(n) ? n : 0;
}

function parseInfo(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Builds a record from `HMGET <identity> info busy beat quiet rss rtt_us concurrency`; null if expired. */
function toRecord(identity: string, fields: (string | null)[], leader: string | null): ProcessRecord | null {
  const [infoText, busy, beat, quiet, rss, rtt, concurrency] = fields;
  const info = infoText == null ? null : parseInfo(infoText);
  if (info === null) return null;
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return {
    identity: typeof info.identity === "string" ? info.identity : identity,
    hostname: typeof info.hostname === "string" ? info.hostname : "",
    pid: num(info.pid),
    tag: typeof info.tag === "string" ? info.tag : "",
    labels: strings(info.labels),
    queues: strings(info.queues),
    version: typeof info.version === "string" ? info.version : null,
    embedded: info.embedded === true,
    startedAt: num(info.started_at),
    concurrency: concurrency != null ? num(concurrency) : num(info.concurrency),
    busy: num(busy),
    beat: num(beat),
    quiet: quiet === "true",
    rssKb: num(rss),
    rttUs: num(rtt),
    leader: leader !== null && leader === identity,
    info,
  };
}

export class ProcessSet {
  constructor(private readonly redis: Redis) {}

  /**
   * Every live process, sorted by identity. Like `ProcessSet.new` it first prunes dead identities
   * (unless `cleanup: false`); an identity whose hash has expired is never listed either way.
   */
  async list(options: { cleanup?: boolean } = {}): Promise<ProcessRecord[]> {
    if (options.cleanup !== false) await this.cleanup();
    const identities = await processIdentities(this.redis);
    const pipeline = this.redis.pipeline().get(LEADER);
    for (const id of identities) pipeline.hmget(processKey(id), ...FIELDS);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    const leader = results[0]?.[1] as string | null;
    const records: ProcessRecord[] = [];
    identities.forEach((id, i) => {
      const record = toRecord(id, results[i + 1]?.[1] as (string | null)[], leader);
      if (record) records.push(record);
    });
    return records;
  }

  /** One process by identity, or null if it is not alive. */
  async get(identity: string): Promise<ProcessRecord | null> {
    const [fields, leader] = await Promise.all([this.redis.hmget(processKey(identity), ...FIELDS), this.leader()]);
    return toRecord(identity, fields, leader);
  }

  /** Members of `processes` (SCARD): fast, but counts a process that died within the last minute. */
  size(): Promise<number> {
    return this.redis.scard(PROCESSES);
  }

  /**
   * Removes identities whose heartbeat hash has expired, at most once a minute cluster-wide (the
   * `process_cleanup` lock, Sidekiq >= 6.5.2). Resolves to how many were removed (0 when another
   * process or admin cleaned up within the minute).
   */
  async cleanup(): Promise<number> {
    const locked = await this.redis.set(PROCESS_CLEANUP, "1", "EX", CLEANUP_LOCK_TTL, "NX");
    if (locked !== "OK") return 0;
    const identities = await processIdentities(this.redis);
    if (identities.length === 0) return 0;
    const results = (await this.redis.pipeline(identities.map((id) => ["hget", processKey(id), "info"])).exec()) ?? [];
    const dead = identities.filter((_, i) => {
      const [error, info] = results[i] ?? [null, null];
      if (error) throw error;
      return info === null;
    });
    return dead.length === 0 ? 0 : this.redis.srem(PROCESSES, ...dead);
  }

  /** Job slots over all live processes. */
  async totalConcurrency(): Promise<number> {
    return (await this.list({ cleanup: false })).reduce((sum, p) => sum + p.concurrency, 0);
  }

  /** Resident memory over all live processes, in KB. */
  async totalRssKb(): Promise<number> {
    return (await this.list({ cleanup: false })).reduce((sum, p) => sum + p.rssKb, 0);
  }

  /** The identity in `dear-leader` (Sidekiq Enterprise leader election), or null. */
  async leader(): Promise<string | null> {
    const leader = await this.redis.get(LEADER);
    return leader === "" ? null : leader;
  }

  /** Stop fetching new jobs (TSTP). One-way: a quiet process stays quiet until it stops. */
  quiet(identity: string): Promise<void> {
    return this.signal(identity, "TSTP");
  }

  /** Graceful stop within the process's timeout (TERM). */
  stop(identity: string): Promise<void> {
    return this.signal(identity, "TERM");
  }

  /** Log every thread (Sidekiq) or busy job (tsq) (TTIN). */
  dumpThreads(identity: string): Promise<void> {
    return this.signal(identity, "TTIN");
  }

  /** `MULTI; LPUSH <identity>-signals <signal>; EXPIRE <identity>-signals 60; EXEC`, as `Process#signal`. */
  async signal(identity: string, signal: ProcessSignal): Promise<void> {
    const key = signalsKey(identity);
    const results = (await this.redis.multi().lpush(key, signal).expire(key, SIGNAL_TTL).exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}
