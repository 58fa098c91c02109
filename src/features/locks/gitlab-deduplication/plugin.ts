/**
 * GitLab's deduplication as a plug-in (docs/deduplication.md): a duplicate push of an idempotent class
 * is dropped at push; the worker releases the key when the job starts (or reschedules it), only when a
 * class this worker runs is idempotent, so other fleets' jobs do not pay for it.
 */
import { definePlugin } from "../../../server/plugin.js";
import { deduplicationOnPush } from "./clientMiddleware.js";
import { dedupPolicyOf } from "./policy.js";
import { DeduplicationServerMiddleware } from "./ServerMiddleware.js";
import { LOCK_SCRIPTS } from "../scripts.js";
import { deduplicationMetrics } from "./metrics.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../client/events.js" {
  interface ClientEvents {
    /** A push was dropped as a duplicate: `holder` (a jid) already holds its deduplication lock. */
    deduplicated: [job: JobPayload, queue: string, holder: string];
  }
}

export const deduplication = definePlugin({
  name: "deduplication",
  scripts: LOCK_SCRIPTS,
  emits: { client: ["deduplicated"] },
  metrics: deduplicationMetrics,
  client({ events }) {
    // Only jobs naming a lock, which the poller's batched move hands back for the client path.
    return { middleware: deduplicationOnPush(events), replaysScheduled: false };
  },
  server(ctx) {
    if (!ctx.registry.all().some((klass) => dedupPolicyOf(klass) !== undefined)) return undefined;
    return { middleware: { use: DeduplicationServerMiddleware, options: [ctx.redis, ctx.client] } };
  },
});
