/**
 * Durable jobs as a plug-in (docs/durable.md). For every job: an abort signal of its own, cancel from any
 * process (CancelListener) and `static timeout` (RunControl), with no Redis call. For the classes that
 * extend DurableJob (only when the worker registers one): the journal read once before the chain, a
 * finished jid ended at once and a cancelled one ended `cancelled`, a sleep or wait (Suspended) ended as
 * a normal return inside every middleware (so locks and limits see the execution end, not fail) and
 * thrown again outside them (so the worker ends the execution `suspended`, not done), and the journal
 * kept past a retry's time.
 */
import { definePlugin } from "../../server/plugin.js";
import { refuseOnCluster } from "../../server/clusterRefusal.js";
import type { ServerContext } from "../../server/context.js";
import type { JobPayload } from "../../wire/payload.js";
import { DurableJob, JOURNAL, journaled } from "./DurableJob.js";
import { Journal } from "./Journal.js";
import { ABORT_GRACE, RunControl } from "./RunControl.js";
import { CancelListener } from "./CancelListener.js";
import { JobCancelledError, Suspended } from "./errors.js";
import { checkDuration } from "../../platform/util/longTimer.js";
import { durableKey } from "../../wire/keys.js";
import { DURABLE_SCRIPTS } from "./scripts.js";
import { durableGauges, durableMetrics } from "./metrics.js";

declare module "../../server/hooks.js" {
  interface JobEvents {
    /**
     * A job's run control acted: timed out (its signal aborted at its timeout); abandoned: it ignored its
     * abort signal past the grace, so its slot was freed. How the execution ended (cancelled, suspended,
     * failed) is the `end` event's.
     */
    durable: [job: JobPayload, queue: string, outcome: "timedOut" | "abandoned"];
  }
}

/** A class's `static timeout` and `static abortGrace`, in seconds. */
interface Timed {
  timeout?: unknown;
  abortGrace?: unknown;
}

export const durable = definePlugin({
  name: "durable",
  scripts: DURABLE_SCRIPTS,
  // A push may override the class's `static timeout` (seconds per execution) in its payload.
  jobOptions: ["timeout"],
  emits: { job: ["durable"] },
  metrics: durableMetrics,
  gauges: durableGauges,
  server(ctx) {
    const control = new RunControl(
      ctx.logger,
      (job, queue, outcome) => ctx.events.emit("durable", job, queue, outcome),
      (work) => ctx.state.abandon(work),
    );
    const durableClass = (name: string) => ctx.registry.get(name)?.prototype instanceof DurableJob;
    const anyDurable = ctx.registry.names().some(durableClass);
    if (anyDurable)
      refuseOnCluster(
        ctx,
        "durable jobs (DurableJob)",
        "a signal is sent by event name to one slot group, and a job waiting in another group would never hear it; " +
          "run durable jobs on a single-server Redis (a shard of its own)",
      );
    // A class's own limits are code: a bad one stops the worker at start, naming the class.
    for (const name of ctx.registry.names()) checkClassLimits(name, ctx.registry.get(name) as Timed | undefined);
    /** The suspension of each execution that slept or parked, thrown again outside the middleware. */
    const suspensions = new WeakMap<JobPayload, Suspended>();
    const aroundDurable = async (
      run: () => Promise<unknown>,
      instance: DurableJob,
      job: JobPayload,
      queue: string,
      abort: AbortController,
    ) => {
      const journal = new Journal(ctx.redis, job.jid, (instance.constructor as typeof DurableJob).journalTtl);
      await journal.load(journaled(job));
      if (journal.cancelled) {
        ctx.logger.info("job cancelled before this execution; ending it");
        throw new JobCancelledError(job.jid);
      }
      if (journal.done) {
        ctx.logger.info("job already completed (a second copy of its jid); ending it");
        return;
      }
      instance[JOURNAL] = journal;
      const suspended = () => suspensions.has(job);
      await control.supervise(run, job, queue, abort, limitsOf(instance, job, ctx), suspended);
      const suspension = suspensions.get(job);
      // Not an end: the worker reports it `suspended` (no outcome, no batch report, no retry).
      if (suspension) throw suspension;
      await journal.finish();
    };
    return {
      services: [new CancelListener(ctx, control)],
      // Not async for a plain job: its only cost is RunControl's one promise.
      around(run, instance, job, queue, abort) {
        if (instance instanceof DurableJob) return aroundDurable(run, instance, job, queue, abort);
        const limits = limitsOf(instance, job, ctx);
        return control.supervise(run, job, queue, abort, limits);
      },
      aroundPerform: anyDurable
        ? async (perform, job) => {
            try {
              return await perform();
            } catch (error) {
              if (!(error instanceof Suspended)) throw error;
              // A normal return for the middleware (locks and limits see the execution end, not fail).
              suspensions.set(job, error);
              // Polled when due, not at the next random poll (up to 7.5 s later with one process).
              ctx.alarms.add(error.dueAt);
              ctx.logger.info(
                error.why === "sleeping" ? "job sleeping; slot freed" : "job parked on an event; slot freed",
              );
              return undefined;
            }
          }
        : undefined,
      // A retry comes back at `retryAt` (epoch s): its journal must still be there, plus its TTL.
      keepLocksForRetry: anyDurable
        ? async (redis, job, retryAt) => {
            if (!durableClass(job.class)) return;
            const ttl = (ctx.registry.get(job.class) as unknown as typeof DurableJob).journalTtl;
            const seconds = ttl + Math.max(0, Math.ceil(retryAt - Date.now() / 1000));
            await redis.expire(durableKey(job.jid), seconds);
          }
        : undefined,
    };
  },
});

/** The payload's `timeout` (set per push) wins over the class's `static timeout`. */
function limitsOf(
  instance: object,
  job: JobPayload,
  ctx: ServerContext,
): { timeout: number | undefined; grace: number } {
  const klass = instance.constructor as Timed;
  const timeout = seconds(job.timeout ?? klass.timeout, "timeout", job, ctx);
  const grace = seconds(klass.abortGrace, "abortGrace", job, ctx, true) ?? ABORT_GRACE;
  return { timeout, grace };
}

function seconds(value: unknown, what: string, job: JobPayload, ctx: ServerContext, zero = false): number | undefined {
  if (value === undefined || value === null) return undefined;
  try {
    return checkDuration(value, { what: `${what} (job ${job.jid})`, zero, fix: "running without it" });
  } catch (error) {
    // A bad value from a payload is someone else's text: report it and run without the limit.
    ctx.logger.warn({ [what]: JSON.stringify(value)?.slice(0, 50) }, (error as Error).message);
    return undefined;
  }
}

/** Throws an ArgumentError naming the class when its `static timeout` or `static abortGrace` is no duration. */
function checkClassLimits(name: string, klass: Timed | undefined): void {
  if (klass?.timeout !== undefined)
    checkDuration(klass.timeout, { what: `${name}.timeout`, fix: "leave it out for no timeout" });
  if (klass?.abortGrace !== undefined)
    checkDuration(klass.abortGrace, {
      what: `${name}.abortGrace`,
      zero: true, // 0: abandoned as soon as aborted
      fix: `leave it out for the default of ${ABORT_GRACE} s`,
    });
}
