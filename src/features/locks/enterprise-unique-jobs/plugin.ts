/**
 * Sidekiq Enterprise's unique jobs as a plug-in (docs/unique-jobs.md): the lock taken at push, released
 * when the job succeeds (or as `unique_until` says); the server side only when a class this worker runs
 * declares `uniqueFor`.
 */
import { definePlugin } from "../../../server/plugin.js";
import { uniqueOnPush } from "./clientMiddleware.js";
import { uniquePolicyOf } from "./policy.js";
import { UniqueServerMiddleware } from "./ServerMiddleware.js";
import type { UniqueOptions } from "./policy.js";
import { LOCK_SCRIPTS } from "../scripts.js";
import { uniqueMetrics } from "./metrics.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../client/events.js" {
  interface ClientEvents {
    /** A push was refused: `holder` (a jid) holds its unique lock. */
    uniqueRejected: [job: JobPayload, queue: string, holder: string];
  }
}

// `uniqueFor`, `uniqueUntil`, `uniqueRetries` become job options wherever this feature is loaded.
declare module "../../../client/options.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- a merge, not a new type
  interface JobOptions extends UniqueOptions {}
}

export const uniqueJobs = definePlugin({
  name: "unique-jobs",
  scripts: LOCK_SCRIPTS,
  jobOptions: ["uniqueFor", "uniqueUntil", "uniqueRetries"] satisfies (keyof UniqueOptions)[],
  emits: { client: ["uniqueRejected"] },
  metrics: uniqueMetrics,
  client({ events }) {
    return { middleware: uniqueOnPush(events), replaysScheduled: false };
  },
  server(ctx) {
    if (!ctx.registry.all().some((klass) => uniquePolicyOf(klass) !== undefined)) return undefined;
    return { middleware: { use: UniqueServerMiddleware, options: [ctx.redis] } };
  },
});
