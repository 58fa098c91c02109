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
 *   tsq:slot-groups           SET    on a Redis Cluster, in the group of queue `default`: the slot groups
 *                                    workers have served (tools name a group that is down by it)
 *
 * On a Redis Cluster every key above is written `{<group>}<key>` (src/platform/redis/clusterConnection.ts).
 */

// The builders, grouped by area; importers use this module only (lint:deps keeps it so).
export * from "./keys/sidekiq.js";
export * from "./keys/cron.js";
export * from "./keys/flow.js";
export * from "./keys/locks.js";
export * from "./keys/jobState.js";
