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
 *   paused                    SET    paused queue names (Sidekiq Pro; OSS 8.1.1+ reads it)
 *   tsq:cron                  SET    names of the periodic (cron) schedules
 *   tsq:cron:<name>           HASH   one schedule: definition, enabled, cursor, last/next run
 *   tsq:cron-tick:<name>:<t>  STRING claim of the tick at epoch second <t>, SET NX EX
 *   cron_jobs                 SET    sidekiq-cron: the schedules' hash keys (`cron_job:<name>`)
 *   cron_job:<name>           HASH   sidekiq-cron: one schedule (cron, klass, message, status, ...)
 *   cron_job:<name>:enqueued  ZSET   sidekiq-cron: ticks already enqueued (ISO 8601 member, ZADD claims)
 *   cron_job:<name>:jid_history LIST sidekiq-cron: the last pushes, {"jid","enqueued"} JSON
 *   tsq:lock:<kind>:<id>      HASH   a lock of the lock core (src/features/locks): holder jid -> expiry (epoch ms);
 *                                    kinds: dedup (<queue>:<sha256 hex>), unique (<sha256 hex of the context>)
 *   tsq:dedup-signal:<id>     STRING "1": a duplicate was dropped while the lock was held (reschedule_once)
 *   tsq:lock:limit:<Class>    HASH   concurrency-limit slots of a class (the lock core, N holders)
 *   tsq:limit-parked:<Class>  LIST   jobs waiting for a slot, oldest at the head (LPOP), JSON payloads
 *   tsq:limits                HASH   class -> its concurrency limit as last read by a worker (for tsqctl)
 *   tsq:batch:<bid>           HASH   a batch (src/features/flow/batches): description, total, times, callbacks, parent
 *   tsq:batch:<bid>:pending   SET    members (jids, `b:<child bid>`) that have not succeeded yet
 *   tsq:batch:<bid>:unrun     SET    members that have not run once yet (`complete` fires when empty)
 *   tsq:batch:<bid>:failed    SET    members whose last run failed
 *   tsq:batch:<bid>:dead      SET    members that died (retries exhausted, retry: false, discarded)
 *   tsq:batch:<bid>:failinfo  HASH   jid -> {"error_class","error_message"}, capped
 *   tsq:batch:<bid>:open      HASH   open `jobs` blocks: token -> "1"; no callback fires while one is open
 *   tsq:batches               ZSET   bid -> epoch second its keys expire (listing; expires with its last)
 *   tsq:workflow:<id>         HASH   a workflow (src/features/flow/batches/workflow): stages, policy, state
 *   tsq:workflow:<id>:results HASH   step name -> the step's JSON result, capped
 *   it-<jid>                  HASH   an iterable job's state (Sidekiq 7.3+): ex, c (cursor JSON), rt, cancelled
 *   tsq:durable:<jid>         HASH   a durable job's journal (src/features/durable): s:<step> -> "<pos>|<kind>|<json>",
 *                                    w (event parked on), ws (since), d:<wait> (deadline), e:<event> (delivered
 *                                    data), done, cancelled (epoch s); EXPIRE 7 days by default
 *   tsq:durable:signal:<event> STRING the last signal's JSON data for <event>, EX its retention (7 days)
 *   tsq:durable:waiters:<event> HASH jid -> the parked job's payload (as in `schedule`)
 *   tsq:durable:index:waiting ZSET  jid -> deadline (epoch s) of each job parked on an event (the gauge's count)
 *   tsq:durable:index:sleeping ZSET jid -> wake time (epoch s) of each sleeping durable job (the gauge's count)
 *   tsq:cancel:<identity>     CHANNEL pub/sub: jids a tsq process must cancel (Ruby never subscribes)
 *   tsq:cancel                CHANNEL pub/sub: the same, to every tsq process (owner not in a work hash yet)
 *   tsq:lock:rate:c:<name>    HASH   a concurrent rate limiter's leases (the lock core, N holders)
 *   tsq:lock:rate:k:<C>:<key> HASH   a keyed class limit's running (or admitted) jids -> expiry, epoch ms
 *   tsq:rl:b:<name>           HASH   a bucket limiter's interval number and count (PEXPIREAT its end)
 *   tsq:rl:w:<name>           ZSET   a window limiter's admissions, scored by epoch ms (also keyed rates)
 *   tsq:rl:l:<name>           HASH   a leaky limiter's level and when it was last drained
 *   tsq:rl:p:<name>           HASH   a points limiter's, the same way
 *   tsq:rl-parked:<C>:<key>   LIST   jobs of a keyed class limit waiting for their key, oldest at the head
 *   tsq:rl-ready:<C>          ZSET   keys of class C with parked jobs, scored by when they may run (epoch ms)
 *   tsq:rl-waiting            HASH   class -> jobs parked on its keyed limits (a gauge)
 *   tsq:stat:overrated        STRING jobs rescheduled because a rate limiter was over its limit
 *   j|<yymmdd>|<H>:<MM>       HASH   Sidekiq 8 metrics, one minute: `<Class>|ms`, `|p`, `|f` (EXPIRE 8 h);
 *                                    `j|<yymmdd>|<H>:<M>` (last minute digit cut) is the 10-minute rollup (3 d)
 *   h|<Class>-<d>-<H>:<M>     STRING Sidekiq 8 metrics: 26 u16 BITFIELD run-time buckets of one minute (8 h)
 *   j|<YYYYmmdd>|<H>:<M>      HASH   Sidekiq 7 metrics, one minute (4-digit year, minute unpadded; no rollup; 8 h)
 *   <Class>-<dd>-<HH>:<M>     STRING Sidekiq 7 metrics: the same histogram, no prefix, day and hour padded (8 h)
 *   <YYYYmmdd>-marks          HASH   Sidekiq::Deploy marks: ISO minute -> label (read by the Metrics page)
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
/**
 * Kill switches, one HASH field per job class: `ImportJob` → `{"action":"defer","delay":300,"at":1795…}`
 * or `{"action":"drop","at":1795…}` (`at`: epoch seconds when set). Written by tsqctl, read by workers.
 */
export const KILL_SWITCHES = "tsq:kill-switches";

export const CRON_SCHEDULES = "tsq:cron";

export function cronScheduleKey(name: string): string {
  return `tsq:cron:${name}`;
}

/** Claim of one tick (epoch seconds): the process that sets it first enqueues the job. */
export function cronTickKey(name: string, tick: number): string {
  return `tsq:cron-tick:${name}:${tick}`;
}

/** sidekiq-cron's set of schedules; its members are the hash keys (`cron_job:<name>`), not names. */
export const SIDEKIQ_CRON_JOBS = "cron_jobs";

/** sidekiq-cron's hash of one schedule. */
export function sidekiqCronJobKey(name: string): string {
  return `cron_job:${name}`;
}

/** sidekiq-cron's record of enqueued ticks: whoever ZADDs a tick first enqueues it. */
export function sidekiqCronEnqueuedKey(name: string): string {
  return `cron_job:${name}:enqueued`;
}

/** sidekiq-cron's list of the latest pushes (jid and time), newest first. */
export function sidekiqCronHistoryKey(name: string): string {
  return `cron_job:${name}:jid_history`;
}

/** Prefix of every lock of the lock core (src/features/locks/Lock.ts). */
export const LOCK_PREFIX = "tsq:lock:";

/** The kinds of lock sharing the core: each API gets its own namespace, so their digests never collide. */
export type LockKind = "dedup" | "limit" | "unique" | "rate";

/** A lock's hash: `tsq:lock:<kind>:<id>`, e.g. `tsq:lock:dedup:default:<64 hex>`. */
export function lockKey(kind: LockKind, id: string): string {
  return `${LOCK_PREFIX}${kind}:${id}`;
}

/** The id part of a lock key of `kind`, or undefined if `key` is not such a key (a hostile payload field). */
export function lockIdOf(kind: LockKind, key: string): string | undefined {
  const prefix = `${LOCK_PREFIX}${kind}:`;
  return key.startsWith(prefix) && key.length > prefix.length ? key.slice(prefix.length) : undefined;
}

/** GitLab's `<idempotency_key>:checking_duplicate`: set when a push was dropped as a duplicate (reschedule_once). */
export function dedupSignalKey(id: string): string {
  return `tsq:dedup-signal:${id}`;
}

/** The concurrency-limit slots of a job class: a lock of the core with up to `limit` holders (jids). */
export function limitSlotsKey(className: string): string {
  return lockKey("limit", className);
}

/** Jobs of a class parked until a slot frees (src/features/locks/gitlab-concurrency-limits): RPUSH to park, LPOP the oldest to resume. */
export function limitParkedKey(className: string): string {
  return `tsq:limit-parked:${className}`;
}

/** Every concurrency-limited class a worker has seen, with the limit it last read: class -> limit. */
export const LIMITS = "tsq:limits";

/**
 * sidekiq-unique-jobs' keys for one lock digest, as the gem (v7/v8) names them: the digest is
 * `<lock_prefix>:<32 hex>` (default prefix `uniquejobs`), `…:RUN` for while_executing's run lock.
 *
 *   <digest>           STRING  the jid last queued for the digest
 *   <digest>:QUEUED    LIST    jids waiting to take the lock; "1" pushed on unlock wakes waiters (5 s)
 *   <digest>:PRIMED    LIST    jids moved from QUEUED while taking it
 *   <digest>:LOCKED    HASH    holder jid -> lock time (epoch seconds, a float); HLEN < lock_limit decides
 *   <digest>:INFO      STRING  optional lock info (JSON)
 */
export function sujKeys(digest: string): {
  digest: string;
  queued: string;
  primed: string;
  locked: string;
  info: string;
} {
  return {
    digest,
    queued: `${digest}:QUEUED`,
    primed: `${digest}:PRIMED`,
    locked: `${digest}:LOCKED`,
    info: `${digest}:INFO`,
  };
}

/** sidekiq-unique-jobs' index of live digests (digest -> lock time), read by its reaper and web UI. */
export const SUJ_DIGESTS = "uniquejobs:digests";
/** sidekiq-unique-jobs' index of until_expired digests (digest -> the gem's expiry score). */
export const SUJ_EXPIRING_DIGESTS = "uniquejobs:expiring_digests";

/**
 * Batches (src/features/flow/batches), tsq's own namespace: Sidekiq Pro's `b-<bid>` keys are never written, so a job
 * carrying a Pro `bid` finds no tsq batch and leaves Pro's bookkeeping to Pro.
 */
export const BATCH_PREFIX = "tsq:batch:";
export const BATCHES = "tsq:batches";

/** A batch's companion keys (Lua builds them from the same list: src/features/flow/batches/lib/batch-keys.lua). */
export const BATCH_KEY_PARTS = ["pending", "unrun", "failed", "dead", "failinfo", "open"] as const;
export type BatchKeyPart = (typeof BATCH_KEY_PARTS)[number];

/** `tsq:batch:<bid>`, or one of its companion keys `tsq:batch:<bid>:<part>` (built the same way in Lua). */
export function batchKey(bid: string, part?: BatchKeyPart): string {
  return part === undefined ? `${BATCH_PREFIX}${bid}` : `${BATCH_PREFIX}${bid}:${part}`;
}

export const WORKFLOW_PREFIX = "tsq:workflow:";

export function workflowKey(id: string, part?: "results"): string {
  return part === undefined ? `${WORKFLOW_PREFIX}${id}` : `${WORKFLOW_PREFIX}${id}:${part}`;
}

export const DURABLE_PREFIX = "tsq:durable:";

/** A durable job's journal of steps, sleeps and waits (src/features/durable). */
export function durableKey(jid: string): string {
  return `${DURABLE_PREFIX}${jid}`;
}

/** The last signal sent to `event`, kept so a job that waits later still gets it. */
export function durableSignalKey(event: string): string {
  return `${DURABLE_PREFIX}signal:${event}`;
}

/** The jobs parked on `event`: jid -> payload. */
export function durableWaitersKey(event: string): string {
  return `${DURABLE_PREFIX}waiters:${event}`;
}

/**
 * Parked durable jobs by jid, scored by deadline or wake time (epoch s), so `tsq_durable_waiting` and
 * `tsq_durable_sleeping` are one ZCOUNT each; entries whose time has passed are stale and not counted.
 */
export const DURABLE_WAITING_INDEX = `${DURABLE_PREFIX}index:waiting`;
export const DURABLE_SLEEPING_INDEX = `${DURABLE_PREFIX}index:sleeping`;

/** The pub/sub channel every tsq process reads cancels from, for a job whose owner is not known yet. */
export const CANCEL_BROADCAST = "tsq:cancel";

/** The pub/sub channel a tsq process reads cancels of its running jobs from. */
export function cancelChannel(identity: string): string {
  return `tsq:cancel:${identity}`;
}

/** An iterable job's saved state, Sidekiq 7.3's `it-<jid>` (src/features/iterable). */
export function iterationKey(jid: string): string {
  return `it-${jid}`;
}
/** A `Limiter.concurrent` limiter's leases: a lock of the core with up to N holders. */
export function rateLeaseKey(name: string): string {
  return lockKey("rate", `c:${name}`);
}

/** A bucket limiter's current interval (its number since the epoch) and count. */
export function rateBucketKey(name: string): string {
  return `tsq:rl:b:${name}`;
}

/** A window limiter's admissions (ZSET scored by epoch ms). */
export function rateWindowKey(name: string): string {
  return `tsq:rl:w:${name}`;
}

/** A leaky-bucket or points limiter's state (HASH level, at). */
export function rateLeakyKey(name: string): string {
  return `tsq:rl:l:${name}`;
}

/** A points limiter's state (HASH level, at), as a leaky bucket's. */
export function ratePointsKey(name: string): string {
  return `tsq:rl:p:${name}`;
}

/** The running (or admitted) jids of one key of a class's `static limit`. */
export function keyedHoldersKey(className: string, key: string): string {
  return lockKey("rate", `k:${className}:${key}`);
}

/** Admissions of one key of a class's `static limit` rate (a window, as rateWindowKey). */
export function keyedWindowKey(className: string, key: string): string {
  return rateWindowKey(`k:${className}:${key}`);
}

/** Jobs of one key of a class's `static limit` waiting for it: RPUSH to park, LPOP the oldest. */
export function keyedParkedKey(className: string, key: string): string {
  return `tsq:rl-parked:${className}:${key}`;
}

/**
 * A `static limit` class's keys with parked jobs, scored by the epoch ms each may admit again. One set per
 * class, so a process serves only the classes it runs and another fleet's keys never crowd it out.
 */
export function keyedReadyKey(className: string): string {
  return `tsq:rl-ready:${className}`;
}
/** class -> jobs parked on its keyed limits. */
export const KEYED_WAITING = "tsq:rl-waiting";
/** Jobs rescheduled by a rate limiter's OverLimit (the payload's `overrated` counts them per job). */
export const STAT_OVERRATED = "tsq:stat:overrated";
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

/** Job outcomes (src/features/outcomes): the capped stream of ends, a completion event per entry. */
export const OUTCOMES = "tsq:outcomes";

/** An opted-in job's last outcome (STRING, JSON, with the class's `result.ttl`). */
export function resultKey(jid: string): string {
  return `tsq:result:${jid}`;
}
