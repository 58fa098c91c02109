/**
 * auditTrail: a feature written outside tsq against its public API ("tsq") only. It writes one entry
 * per ended job to a Redis list, and adds one of each thing a plug-in declares: an event
 * (`audit:written`), a metric (`tsq_audit_entries_total`), a worker setting (`auditTrailMaxLength`), a
 * Lua script (audit-append-1.lua), a lock kind (a held job's `audit:hold:<jid>`, released when the job
 * dies) and a fetch order (`first`: a queue tried before the others).
 *
 *   const audit = auditTrail({ hold: ["ChargeCard"], first: "audit" });
 *   audit.events.on("audit:written", (entry, length) => ...);
 *   new Worker({ jobs, plugins: [...builtinPlugins(), audit], options: { auditTrailMaxLength: 500 } });
 */
import { EventEmitter } from "node:events";
import { definePlugin, defineSetting, luaScript, type JobPayload, type Plugin, type StoredJobs } from "tsq";
import { HOLD_SECONDS, TRAIL, holdKey } from "./keys.js";

// The setting is a worker option an app types: `new Worker({ options: { auditTrailMaxLength: 500 } })`.
declare module "tsq" {
  interface WorkerOptions {
    /** Entries the audit trail keeps (default 1000, 1 to 1,000,000). */
    auditTrailMaxLength?: number;
  }
}

export interface AuditEntry {
  jid: string;
  class: string;
  queue: string;
  /** How the job ended: done, failed (retried), dead, cancelled. */
  status: string;
}

export interface AuditEvents {
  /** An entry is in Redis; `length` is the trail's after it (at most `auditTrailMaxLength`). */
  "audit:written": [entry: AuditEntry, length: number];
}

export interface AuditTrailOptions {
  /** Classes whose jobs hold `audit:hold:<jid>` from their first start until done or dead. */
  hold?: readonly string[];
  /** A queue each fetch tries first, when it is in the capsule's order (not paused). */
  first?: string;
  /** Plug-ins whose fetch order this one's sees (it then has the last word). */
  after?: readonly string[];
}

/** Entries the trail keeps: a worker option, read once per worker. */
export const maxLength = defineSetting({
  key: "auditTrailMaxLength",
  default: 1000,
  min: 1,
  max: 1_000_000,
  integer: true,
});

const append = luaScript<[trail: string, entry: string, maxLength: number], number>(
  new URL("./audit-append-1.lua", import.meta.url),
);

/** The plug-in, with its own events: one emitter per plug-in object, nothing shared in the module. */
export type AuditTrail = Plugin & { readonly events: EventEmitter<AuditEvents> };

export function auditTrail(options: AuditTrailOptions = {}): AuditTrail {
  const events = new EventEmitter<AuditEvents>();
  const hold = new Set(options.hold);
  const { first } = options;
  // The hold keys of the stored jobs that have one (a job of another class costs no round trip).
  const heldKeys = (stored: StoredJobs): string[] =>
    [...stored].map(payloadOf).flatMap((job) => (hold.has(job.class) ? [holdKey(job.jid)] : []));
  return definePlugin({
    name: "auditTrail",
    events,
    settings: [maxLength],
    scripts: [append],
    // Dead, buried by recovery, deleted or killed through the API: the hold goes with the job.
    locks: {
      release: async (redis, stored) => {
        const keys = heldKeys(stored);
        if (keys.length > 0) await redis.del(...keys);
      },
    },
    fetch:
      first === undefined
        ? undefined
        : {
            after: options.after ?? [],
            order: (_ctx, capsule) =>
              capsule.queues.some((queue) => queue.name === first)
                ? (queues) => (queues.includes(first) ? [first, ...queues.filter((q) => q !== first)] : queues)
                : undefined,
          },
    server(ctx) {
      const kept = maxLength.read(ctx.options);
      // Made only when the worker serves or reports metrics: otherwise nothing is counted.
      let written: { inc(labels: { queue: string; status: string }): void } | undefined;
      return {
        metrics(registry, prom) {
          written = new prom.Counter({
            name: "tsq_audit_entries_total",
            help: "Entries written to the audit trail, by queue and how the job ended.",
            labelNames: ["queue", "status"],
            registers: [registry],
          });
        },
        around:
          hold.size === 0
            ? undefined
            : async (run, _instance, job) => {
                if (hold.has(job.class)) await ctx.redis.set(holdKey(job.jid), ctx.identity, "EX", HOLD_SECONDS);
                return run();
              },
        onEnd(job, queue, end) {
          const { status } = end.outcome;
          if (status === "suspended") return undefined; // a pause, not an end
          const entry: AuditEntry = { jid: job.jid, class: job.class, queue, status };
          const release = (status === "done" || status === "cancelled") && hold.has(job.class);
          return append
            .run(ctx.redis, TRAIL, JSON.stringify(entry), kept)
            .then(async (length) => {
              if (release) await ctx.redis.del(holdKey(job.jid));
              written?.inc({ queue, status });
              events.emit("audit:written", entry, length);
            })
            .catch((error: unknown) => ctx.logger.warn({ err: error, jid: job.jid }, "audit entry not written"));
        },
      };
    },
  });
}

function payloadOf(stored: JobPayload | string | Buffer): JobPayload {
  return typeof stored === "string" || Buffer.isBuffer(stored) ? (JSON.parse(stored.toString()) as JobPayload) : stored;
}
