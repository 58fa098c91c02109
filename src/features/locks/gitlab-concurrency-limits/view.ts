/**
 * `tsqctl limits [--json]`: every concurrency-limited class (docs/concurrency-limits.md) with its limit,
 * the jobs holding a slot and the jobs parked waiting for one. A class appears once a worker has run or
 * parked one of its jobs.
 */
import { defineView } from "../../../server/pluginViews.js";
import { readLimits } from "./status.js";

function describe(limit: number): string {
  if (Number.isNaN(limit)) return "?";
  if (limit < 0) return "paused";
  return limit === 0 ? "none" : String(limit);
}

export const limitsView = defineView({
  name: "limits",
  description: "list concurrency-limited job classes: limit, running, parked",
  read: (redis) => readLimits(redis),
  text(rows, table) {
    if (rows.length === 0) return "no concurrency-limited class has run yet";
    return table(
      ["CLASS", "LIMIT", "RUNNING", "PARKED"],
      rows.map((row) => [row.class, describe(row.limit), String(row.running), String(row.parked)]),
    ).join("\n");
  },
});
