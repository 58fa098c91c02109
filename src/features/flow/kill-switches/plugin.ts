/**
 * Kill switches (`tsqctl defer|drop <Class>`) as a plug-in: an intercept that takes a switched class's
 * job before it starts. No await when none applies and the cached switches are fresh (docs/kill-switches.md).
 */
import { definePlugin } from "../../../server/plugin.js";
import { interceptJob } from "./intercept.js";

export const killSwitches = definePlugin({
  name: "kill-switches",
  server(ctx) {
    return {
      intercept(job, unit) {
        const taken = interceptJob(ctx, job, unit);
        return taken === true ? Promise.resolve(true) : taken;
      },
    };
  },
});
