/**
 * The lock family's shared duty as a plug-in: a job leaving Redis without running again (dead, a poison
 * pill) frees the locks its payload names, and one scheduled for a retry keeps its unique lock until
 * then (release.ts). First of the lock plug-ins, as every one of them relies on it.
 */
import { definePlugin } from "../../server/plugin.js";
import { LOCK_MARKERS, keepLocksForRetry, releaseLocksOf } from "./release.js";

export const lockRelease = definePlugin({
  name: "lock-release",
  locks: { release: (redis, stored) => releaseLocksOf(redis, stored), markers: LOCK_MARKERS },
  server() {
    return {
      keepLocksForRetry: (redis, job, retryAt) => keepLocksForRetry(redis, job, retryAt),
    };
  },
});
