/**
 * GitLab's concurrency limits as a plug-in (docs/concurrency-limits.md): jobs of a limited class are
 * admitted at push (a slot, or parked) instead of LPUSHed, under each Client's own bounds; the worker
 * checks the slot at fetch time for jobs admitted elsewhere (only when a class it runs declares a
 * limit) and runs the limiter's slot refresh and resume sweeps as a service.
 */
import { limitsView } from "./view.js";
import { definePlugin } from "../../../server/plugin.js";
import type { ServerContext } from "../../../server/context.js";
import { workerLocal } from "../../../server/WorkerLocals.js";
import { ArgumentError } from "../../../wire/errors.js";
import { ADMISSION_DEFAULTS, Admission, type AdmissionSettings } from "./clientMiddleware.js";
import { ConcurrencyLimiter } from "./ConcurrencyLimiter.js";
import { ConcurrencyLimitServerMiddleware } from "./ServerMiddleware.js";
import { LOCK_SCRIPTS } from "../scripts.js";
import { limitSlotLua } from "./scripts.js";
import { concurrencyLimitGauges, concurrencyLimitMetrics } from "./metrics.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../server/hooks.js" {
  interface JobEvents {
    /** A worker parked a fetched job (no slot free), or refused to because its parked list was full. */
    limited: [job: JobPayload, queue: string, action: "parked" | "refused"];
  }
}

declare module "../../../client/ClientOptions.js" {
  interface ClientOptions {
    /**
     * Jobs of concurrency-limited classes are parked or given a slot at push (docs/concurrency-limits.md):
     * most jobs a class may have parked (default 10,000) and seconds a slot granted at push waits for its
     * job (default 60); a worker's own client takes its `concurrency_limit_max_parked` and `heartbeat_ttl`.
     */
    concurrencyLimits?: { maxParked?: number; slotTtl?: number };
  }
}

declare module "../../../client/events.js" {
  interface ClientEvents {
    /** A push parked a job (no slot free) or was refused (its parked list is full). */
    limited: [job: JobPayload, queue: string, action: "parked" | "refused"];
  }
}
import { maxParked } from "./settings.js";

/** One limiter per worker, kept on its context: shared with the keyed rate limits' leases (enterprise-rate-limits). */
const LIMITER = workerLocal<ConcurrencyLimiter>("concurrency limiter");

export function limiterFor(ctx: ServerContext): ConcurrencyLimiter {
  const { options } = ctx;
  return ctx.locals.get(
    LIMITER,
    () =>
      new ConcurrencyLimiter(
        ctx.redis,
        {
          slotTtl: options.heartbeatTtl,
          refreshInterval: options.heartbeatInterval,
          maxParked: maxParked.read(options),
        },
        ctx.logger,
      ),
  );
}

/**
 * The Client option `concurrencyLimits`, checked, over the bounds of the worker the Client belongs to
 * (its `concurrency_limit_max_parked` and `heartbeat_ttl`: jobs pushed from its jobs park under them),
 * over the defaults.
 */
export function resolveAdmission(
  given: Partial<AdmissionSettings> = {},
  worker?: Readonly<Record<string, unknown>>,
): AdmissionSettings {
  const fromWorker: Partial<AdmissionSettings> =
    worker === undefined
      ? {}
      : {
          maxParked: maxParked.read(worker),
          ...(typeof worker.heartbeatTtl === "number" ? { slotTtl: worker.heartbeatTtl } : {}),
        };
  const settings = { ...ADMISSION_DEFAULTS, ...fromWorker, ...given };
  if (!Number.isInteger(settings.maxParked) || settings.maxParked < 1)
    throw new ArgumentError(`concurrencyLimits.maxParked must be a positive integer, got ${settings.maxParked}`);
  if (!(settings.slotTtl > 0))
    throw new ArgumentError(`concurrencyLimits.slotTtl must be a positive number of seconds, got ${settings.slotTtl}`);
  return settings;
}

export const concurrencyLimits = definePlugin({
  name: "concurrency-limits",
  views: [limitsView],
  scripts: [limitSlotLua, ...LOCK_SCRIPTS],
  emits: { job: ["limited"], client: ["limited"] },
  metrics: concurrencyLimitMetrics,
  gauges: concurrencyLimitGauges,
  settings: [maxParked],
  clientSettings: ["concurrencyLimits"],
  client({ settings, workerOptions, events }) {
    const given = (settings.concurrencyLimits ?? {}) as Partial<AdmissionSettings>;
    const admission = new Admission(resolveAdmission(given, workerOptions), events);
    // Scheduled jobs coming due were stored: never admitted at push, so the poller may batch them.
    return { middleware: admission.middleware, replaysScheduled: false, alternateWrite: admission };
  },
  server(ctx) {
    const limiter = limiterFor(ctx);
    const limited = ctx.registry
      .all()
      .some((klass) => (klass as { concurrencyLimit?: unknown }).concurrencyLimit != null);
    return {
      // Ahead of deduplication and unique jobs: a parked job has not started, so it keeps its locks.
      ...(limited ? { middleware: { use: ConcurrencyLimitServerMiddleware, options: [limiter, ctx] } } : {}),
      services: [{ name: "concurrency-limiter", start: () => limiter.start(), stop: () => limiter.stop() }],
    };
  },
});
