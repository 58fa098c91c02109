/**
 * `tsqctl ratelimits [--json]`: rate limiters with state in Redis (kind, name, used), classes with jobs
 * parked on their keyed `static limit`, and the OverLimit reschedules so far (docs/rate-limits.md).
 */
import type { Command } from "commander";
import { readRateLimits } from "../../features/locks/enterprise-rate-limits/status.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";
import { table } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

export function registerRateLimits(program: Command, io: CliIO): void {
  const list = program
    .command("ratelimits")
    .description("list rate limiters in use, classes with jobs parked on keyed limits, and reschedules");
  addRedisUrlOption(addJsonOption(list)).action(async (flags: Flags) => {
    const status = await withRedis(resolveRedisUrl(flags.redisUrl, io), (r) => readRateLimits(r));
    if (flags.json) return printJson(io, status);
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
    io.out(`${out.join("\n")}\n`);
  });
}
