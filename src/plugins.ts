/**
 * The built-in features, in chain order: THE list. A worker runs the plug-ins' server hooks in this
 * order (first = outermost, nearest the fetch) and a client runs their push middleware in reverse, so
 * each feature sits at the same depth on both sides of Redis (docs/internals.md quotes this list; a
 * test asserts it).
 *
 *   tracing                the producer/consumer spans wrap everything else; correlation ids
 *   kill-switches, expiry  take a job before it starts
 *   batches                a member reports its end, whatever the chain inside decided
 *   durable                each job's own abort signal (cancel, timeout); a durable job's journal; a
 *                          sleep or wait ends the execution as a normal return, inside the middleware
 *   outcomes               an opted-in job's end stored and announced; progress reports
 *   lock-release           frees the locks of jobs that leave Redis without running
 *   keyed-rate-limits      the `static limit` gate, before any slot or lock is taken
 *   concurrency-limits     a parked job has not started, so it keeps its locks (client: last, so a
 *                          dropped duplicate is never parked)
 *   sidekiq-unique-jobs, unique-jobs, deduplication   the locks
 *   over-limit-reschedule  around perform only, inside every middleware
 *   activejob              finds the class a Rails wrapper names
 *   cron                   a service: the periodic-job leader
 *   reliable-push          a write path under every push (holds writes while Redis is away), not in a chain
 */
import type { Plugin } from "./server/plugin.js";
import { tracing } from "./features/tracing/plugin.js";
import { killSwitches } from "./features/flow/kill-switches/plugin.js";
import { expiry } from "./features/flow/expiry/plugin.js";
import { batches } from "./features/flow/batches/plugin.js";
import { durable } from "./features/durable/plugin.js";
import { outcomes } from "./features/outcomes/plugin.js";
import { lockRelease } from "./features/locks/plugin.js";
import { keyedRateLimits, overLimitReschedule } from "./features/locks/enterprise-rate-limits/plugin.js";
import { concurrencyLimits } from "./features/locks/gitlab-concurrency-limits/plugin.js";
import { sidekiqUniqueJobs } from "./features/locks/sidekiq-unique-jobs/plugin.js";
import { uniqueJobs } from "./features/locks/enterprise-unique-jobs/plugin.js";
import { deduplication } from "./features/locks/gitlab-deduplication/plugin.js";
import { activeJob } from "./features/activejob/plugin.js";
import { cron } from "./features/cron/plugin.js";
import { reliablePush } from "./features/flow/reliable-push/plugin.js";

/** A fresh copy of the built-in list, in chain order (callers may filter or extend it). */
export function builtinPlugins(): Plugin[] {
  return [
    tracing,
    killSwitches,
    expiry,
    batches,
    durable,
    outcomes,
    lockRelease,
    keyedRateLimits,
    concurrencyLimits,
    sidekiqUniqueJobs,
    uniqueJobs,
    deduplication,
    overLimitReschedule,
    activeJob,
    cron,
    reliablePush,
  ];
}
