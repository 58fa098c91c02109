/**
 * The sidekiq-unique-jobs gem's locks as a plug-in (docs/sidekiq-unique-jobs.md). The server side is
 * always on (no Redis call for a job without `lock`): a job a Ruby app pushed with the gem names its
 * lock in its payload, and must release it here whatever the tsq class declares.
 */
import { definePlugin } from "../../../server/plugin.js";
import { sujOnPush } from "./clientMiddleware.js";
import { SujServerMiddleware } from "./ServerMiddleware.js";
import type { SujOptions } from "./policy.js";
import { SUJ_SCRIPTS } from "./scripts.js";

// The gem's `lock`, `lockTtl`, `onConflict`, ... become job options wherever this feature is loaded.
declare module "../../../client/options.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- a merge, not a new type
  interface JobOptions extends SujOptions {}
}

export const sidekiqUniqueJobs = definePlugin({
  name: "sidekiq-unique-jobs",
  scripts: SUJ_SCRIPTS,
  jobOptions: [
    "lock",
    "lockTtl",
    "lockTimeout",
    "lockLimit",
    "onConflict",
    "lockPrefix",
    "uniqueAcrossQueues",
    "uniqueAcrossWorkers",
  ] satisfies (keyof SujOptions)[],
  client() {
    return { middleware: sujOnPush, replaysScheduled: false };
  },
  server(ctx) {
    return { middleware: { use: SujServerMiddleware, options: [ctx.redis, ctx.client] } };
  },
});
