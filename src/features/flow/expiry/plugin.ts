/**
 * Job expiry (`expiresIn`) as a plug-in: the deadline stamped at push, and a job past it dropped before
 * it starts, never retried (docs/flow-control.md#expiry).
 */
import { definePlugin } from "../../../server/plugin.js";
import { jobNameOf } from "../../../client/options.js";
import { dropIfExpired } from "./expire.js";
import { stampExpiry } from "./stamp.js";

export const expiry = definePlugin({
  name: "expiry",
  client() {
    return { stamp: (job, klass) => stampExpiry(job, jobNameOf(klass)) };
  },
  server(ctx) {
    return { intercept: (job, unit) => dropIfExpired(ctx, job, unit) };
  },
});
