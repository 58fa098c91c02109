/**
 * `tsqctl limits [--json]`: every concurrency-limited class (docs/concurrency-limits.md) with its limit,
 * the jobs holding a slot and the jobs parked waiting for one. A class appears once a worker has run or
 * parked one of its jobs.
 */
import type { Command } from "commander";
import { readLimits } from "../../features/locks/gitlab-concurrency-limits/status.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";
import { table } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

function describe(limit: number): string {
  if (Number.isNaN(limit)) return "?";
  if (limit < 0) return "paused";
  return limit === 0 ? "none" : String(limit);
}

export function registerLimits(program: Command, io: CliIO): void {
  const list = program.command("limits").description("list concurrency-limited job classes: limit, running, parked");
  addRedisUrlOption(addJsonOption(list)).action(async (flags: Flags) => {
    const rows = await withRedis(resolveRedisUrl(flags.redisUrl, io), (r) => readLimits(r));
    if (flags.json) return printJson(io, rows);
    if (rows.length === 0) return io.out("no concurrency-limited class has run yet\n");
    const lines = table(
      ["CLASS", "LIMIT", "RUNNING", "PARKED"],
      rows.map((row) => [row.class, describe(row.limit), String(row.running), String(row.parked)]),
    );
    io.out(`${lines.join("\n")}\n`);
  });
}
