/**
 * Durable jobs as a plug-in (docs/durable.md). For every job: its own abort signal, cancel from any
 * process (CancelListener) and `static timeout` (RunControl), with no Redis call. For the classes that
 * extend DurableJob (only when the worker registers one): the journal read once before the chain, a
 * finished or cancelled jid ended at once, and a sleep or wait (Suspended) ended as a normal return
 * inside every middleware, so locks and limits see the execution end, not fail.
 */
import { definePlugin } from "../../server/plugin.js";
import type { ServerContext } from "../../server/context.js";
import type { JobPayload } from "../../wire/payload.js";
import { DurableJob, JOURNAL } from "./DurableJob.js";
import { Journal } from "./Journal.js";
import { ABORT_GRACE, RunControl } from "./RunControl.js";
import { CancelListener } from "./CancelListener.js";
import { Suspended } from "./errors.js";
import { ArgumentError } from "../../wire/errors.js";

/** A class's `static timeout` and `static abortGrace`, in seconds. */
interface Timed {
  timeout?: unknown;
  abortGrace?: unknown;
}

export const durable = definePlugin({
  name: "durable",
  server(ctx) {
    const queues = new WeakMap<JobPayload, string>();
    const control = new RunControl(
      ctx.logger,
      (job, outcome) => ctx.events.emit("durable", job, queues.get(job) ?? job.queue ?? "default", outcome),
      (work) => ctx.state.abandon(work),
    );
    const anyDurable = ctx.registry.names().some((name) => ctx.registry.get(name)?.prototype instanceof DurableJob);
    const suspended = new WeakSet<JobPayload>();
    return {
      services: [new CancelListener(ctx, control)],
      async around(run, instance, job, queue) {
        queues.set(job, queue);
        let journal: Journal | undefined;
        if (instance instanceof DurableJob) {
          journal = new Journal(ctx.redis, job.jid, (instance.constructor as typeof DurableJob).journalTtl);
          await journal.load();
          if (journal.cancelled) {
            ctx.logger.info("job cancelled before this execution; ending it");
            ctx.events.emit("durable", job, queue, "cancelled");
            return;
          }
          if (journal.done) {
            ctx.logger.info("job already completed (a second copy of its jid); ending it");
            return;
          }
          instance[JOURNAL] = journal;
        }
        const cancelled = await control.supervise(run, instance, job, limitsOf(instance, job, ctx));
        if (journal && !cancelled && !suspended.has(job)) await journal.finish();
      },
      aroundPerform: anyDurable
        ? async (perform, job, queue) => {
            try {
              return await perform();
            } catch (error) {
              if (!(error instanceof Suspended)) throw error;
              suspended.add(job);
              ctx.logger.info(
                error.why === "sleeping" ? "job sleeping; slot freed" : "job parked on an event; slot freed",
              );
              ctx.events.emit("durable", job, queue, error.why);
              return undefined;
            }
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
  const grace = seconds(klass.abortGrace, "abortGrace", job, ctx) ?? ABORT_GRACE;
  return { timeout, grace };
}

function seconds(value: unknown, what: string, job: JobPayload, ctx: ServerContext): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  // A bad value from a payload is someone else's text: report it and run without the limit.
  ctx.logger.warn(
    { [what]: JSON.stringify(value)?.slice(0, 50) },
    new ArgumentError(`${what} must be seconds > 0 (job ${job.jid}); running without it`).message,
  );
  return undefined;
}
