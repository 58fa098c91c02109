/**
 * Kill switches (`tsqctl defer|drop <Class>`) as a plug-in: an intercept that takes a switched class's
 * job before it starts. No await when none applies and the cached switches are fresh (docs/kill-switches.md).
 */
import { definePlugin } from "../../../server/plugin.js";
import { interceptJob } from "./intercept.js";
import { SwitchBoard } from "./SwitchBoard.js";
import { killSwitchMetrics } from "./metrics.js";
import { refreshInterval } from "./settings.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../server/hooks.js" {
  interface JobEvents {
    /** A kill switch deferred or dropped a job instead of running it (intercept.ts). */
    switched: [job: JobPayload, queue: string, action: "deferred" | "dropped"];
  }
}

export const killSwitches = definePlugin({
  name: "kill-switches",
  emits: { job: ["switched"] },
  metrics: killSwitchMetrics,
  settings: [refreshInterval],
  server(ctx) {
    // This worker's cached copy of the switches, shared by its job slots (read from Redis at first use).
    const board = new SwitchBoard(ctx.redis, ctx.logger, refreshInterval.read(ctx.options));
    return {
      intercept(job, unit) {
        const taken = interceptJob(ctx, board, job, unit);
        return taken === true ? Promise.resolve(true) : taken;
      },
    };
  },
});
