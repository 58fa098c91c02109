/**
 * `tsqctl ratelimits [--json]`: rate limiters with state in Redis (kind, name, used), classes with jobs
 * parked on their keyed `static limit`, and the OverLimit reschedules so far (docs/rate-limits.md).
 */
import { defineView } from "../../../server/pluginViews.js";
import { readRateLimits } from "./status.js";

export const rateLimitsView = defineView({
  name: "ratelimits",
  description: "list rate limiters in use, classes with jobs parked on keyed limits, and reschedules",
  read: (redis) => readRateLimits(redis),
  text(status, table) {
    const out: string[] = [];
    if (status.limiters.length === 0) out.push("no rate limiter has state in Redis (idle limiters expire)");
    else
      out.push(
        ...table(
          ["KIND", "NAME", "USED"],
          status.limiters.map((l) => [l.kind, l.name, String(l.used)]),
        ),
      );
    out.push("");
    if (status.keyed.length === 0) out.push("no job is parked on a keyed class limit");
    else
      out.push(
        ...table(
          ["CLASS", "PARKED", "KEYS"],
          status.keyed.map((k) => [k.class, String(k.parked), String(k.keys)]),
        ),
      );
    out.push("", `jobs rescheduled by OverLimit (all time): ${status.overrated}`);
    return out.join("\n");
  },
});
