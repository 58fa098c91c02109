/**
 * Every Redis key tsq reads or writes, in one place. The layout is Sidekiq's (OSS 6.4–8.x, plus the
 * Pro/Enterprise names noted below), unprefixed, so Ruby and TypeScript processes share one Redis.
 *
 *   queues                    SET    known queue names            (client SADD)
 *   queue:<name>              LIST   pending jobs, LPUSH / BRPOP  (FIFO: push left, pop right)
 *   schedule | retry | dead   ZSET   job JSON scored by epoch seconds (float)
 *   processes                 SET    live process identities
 *   <identity>                HASH   heartbeat record, EXPIRE 60
 *   <identity>:work           HASH   running jobs (Sidekiq >= 6.4.2); `:workers` in 6.4.1
 *   <identity>-signals        LIST   remote control (TSTP, TERM, TTIN)
 *   stat:processed[:date]     STRING counters; daily keys use the UTC date
 *   dear-leader               STRING the leader's identity, SET NX EX (Sidekiq Enterprise)
 *   tsq:cron                  SET    names of the periodic (cron) schedules
 *   tsq:cron:<name>           HASH   one schedule: definition, enabled, cursor, last/next run
 *   tsq:cron-tick:<name>:<t>  STRING claim of the tick at epoch second <t>, SET NX EX
 */

export const QUEUES = "queues";
export const SCHEDULE = "schedule";
export const RETRY = "retry";
export const DEAD = "dead";
export const PROCESSES = "processes";
/** Mutex so stale-process pruning runs at most once a minute cluster-wide (Sidekiq >= 6.5.2). */
export const PROCESS_CLEANUP = "process_cleanup";
/** Sidekiq Enterprise's leader key; OSS `ProcessSet#leader` reads it. */
export const LEADER = "dear-leader";
/** Sidekiq Pro super_fetch registry of processes that own private queues. */
export const SUPER_PROCESSES = "super_processes";

export const STAT_PROCESSED = "stat:processed";
export const STAT_FAILED = "stat:failed";

/** The sorted sets the scheduler polls, in Sidekiq's order (`Scheduled::SETS`). */
export const POLLED_SETS = [RETRY, SCHEDULE] as const;
export type JobSetName = typeof SCHEDULE | typeof RETRY | typeof DEAD;

export function queueKey(name: string): string {
  return `queue:${name}`;
}

/** Strips the `queue:` prefix from a key returned by BRPOP. */
export function queueNameFromKey(key: string): string {
  return key.startsWith("queue:") ? key.slice("queue:".length) : key;
}

export function processKey(identity: string): string {
  return identity;
}

/** Work hash read by Sidekiq >= 6.4.2 (`WorkSet`). */
export function workKey(identity: string): string {
  return `${identity}:work`;
}

/** Work hash read by Sidekiq 6.4.1's API and Web UI (renamed in 6.4.2). */
export function legacyWorkKey(identity: string): string {
  return `${identity}:workers`;
}

export function signalsKey(identity: string): string {
  return `${identity}-signals`;
}

/** Daily counter, e.g. `stat:processed:2026-11-21` (UTC date, as Sidekiq writes it). */
export function dailyStatKey(base: typeof STAT_PROCESSED | typeof STAT_FAILED, date: Date): string {
  return `${base}:${date.toISOString().slice(0, 10)}`;
}

/** Sidekiq Pro's private in-progress list for reliable fetch. */
export function privateQueueKey(identity: string, queue: string): string {
  return `queue:sq|${identity}|${queue}`;
}

/** Glob matching every private list of one identity (SCAN MATCH), with glob characters escaped. */
export function privateQueuePattern(identity: string): string {
  return `queue:sq|${identity.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}|*`;
}

/** The queue name of a private list key of `identity`. */
export function queueOfPrivateKey(identity: string, key: string): string {
  return key.slice(`queue:sq|${identity}|`.length);
}

/** Prefix of the per-jid recovery counters used to spot poison pills (`tsq:recovered:<jid>`). */
export const RECOVERY_COUNTER_PREFIX = "tsq:recovered:";

/** Lock so that only one process recovers a given dead identity (`SET NX EX`). */
export function recoveryLockKey(identity: string): string {
  return `tsq:recovering:${identity}`;
}

/**
 * Periodic jobs (tsq's own layout, prefixed: sidekiq-cron's `cron_job:*` keys are read by its own
 * poller, which would enqueue our schedules a second time in a mixed fleet).
 */
export const CRON_SCHEDULES = "tsq:cron";

export function cronScheduleKey(name: string): string {
  return `tsq:cron:${name}`;
}

/** Claim of one tick (epoch seconds): the process that sets it first enqueues the job. */
export function cronTickKey(name: string, tick: number): string {
  return `tsq:cron-tick:${name}:${tick}`;
}
