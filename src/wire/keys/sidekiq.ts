/**
 * Sidekiq's own keys (OSS, plus Pro's reliable fetch and paused set and Enterprise's leader), the
 * execution metrics both Sidekiq 7 and 8 read, and tsq's bookkeeping of reliable fetch. Reached through
 * src/wire/keys.ts, whose header maps every key.
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
/** Sidekiq Pro's paused queue names (`Queue#pause!`); OSS 8.1.1+ reads it with SISMEMBER. */
export const PAUSED = "paused";

export const STAT_PROCESSED = "stat:processed";
export const STAT_FAILED = "stat:failed";

/** The sorted sets the scheduler polls, in Sidekiq's order (`Scheduled::SETS`). */
export const POLLED_SETS = [RETRY, SCHEDULE] as const;
export type JobSetName = typeof SCHEDULE | typeof RETRY | typeof DEAD;

export function queueKey(name: string): string {
  return `queue:${name}`;
}

/**
 * Strips the `queue:` prefix from a key returned by BRPOP, and on a Redis Cluster the slot group's hash
 * tag before it (`{bulk}queue:bulk`: src/platform/redis/clusterConnection.ts).
 */
export function queueNameFromKey(key: string): string {
  if (key.startsWith("queue:")) return key.slice("queue:".length);
  const tagEnd = key.startsWith("{") ? key.indexOf("}queue:") : -1;
  return tagEnd === -1 ? key : key.slice(tagEnd + "}queue:".length);
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

/** On a Redis Cluster: the slot groups workers have served, in the group of queue `default`. */
export const SLOT_GROUPS = "tsq:slot-groups";

/** Prefix of the per-jid recovery counters used to spot poison pills (`tsq:recovered:<jid>`). */
export const RECOVERY_COUNTER_PREFIX = "tsq:recovered:";

/** Lock so that only one process recovers a given dead identity (`SET NX EX`). */
export function recoveryLockKey(identity: string): string {
  return `tsq:recovering:${identity}`;
}

/**
 * Execution counters of one bucket: Sidekiq 8's minute `250214|8:43` or 10 minutes `250214|8:4`, or
 * Sidekiq 7's minute `20250214|8:3` (the two never share a name: 6 date digits against 8).
 */
export function executionCountsKey(bucket: string): string {
  return `j|${bucket}`;
}
/** Sidekiq 8's run-time histogram of a class for one minute, `window` as `14-8:5` (day-hour:minute, unpadded). */
export function executionHistogramKey(className: string, window: string): string {
  return `h|${className}-${window}`;
}
/** Sidekiq 7's run-time histogram of a class for one minute, `window` as `14-08:5` (day and hour padded). */
export function sidekiq7HistogramKey(className: string, window: string): string {
  return `${className}-${window}`;
}
/** `Sidekiq::Deploy`'s marks of a UTC day, e.g. `20250214-marks`. */
export function deployMarksKey(day: Date): string {
  return `${day.toISOString().slice(0, 10).replaceAll("-", "")}-marks`;
}
