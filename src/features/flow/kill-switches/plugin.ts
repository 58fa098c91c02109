/**
 * Kill switches (`tsqctl defer|drop <Class>`) as a plug-in: an intercept that takes a switched class's
 * job before it starts. No await when none applies and the cached switches are fresh (docs/kill-switches.md).
 */
import { definePlugin } from "../../../server/plugin.js";
import { interceptJob } from "./intercept.js";
import { SwitchBoard } from "./SwitchBoard.js";
import { refreshInterval } from "./settings.js";

export const killSwitches = definePlugin({
  name: "kill-switches",
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
