/**
 * Kill switches from the command line, no deploy needed (GitLab flips feature flags for the same):
 *
 *   tsqctl defer <Class> [--for 5m]   workers re-schedule the class's jobs instead of running them
 *   tsqctl drop <Class>               workers discard them, logging each jid
 *   tsqctl resume <Class>             back to normal
 *   tsqctl switches [--json]          what is set
 *
 * Workers notice within `kill_switch_refresh_interval` seconds (2 by default).
 */
import { InvalidArgumentError, type Command } from "commander";
import { nowSeconds } from "../../wire/timestamps.js";
import {
  DEFAULT_DEFER_DELAY,
  readSwitches,
  removeSwitch,
  setSwitch,
  type KillSwitch,
} from "../../features/flow/kill-switches/switches.js";
import { refreshInterval } from "../../features/flow/kill-switches/settings.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";
import { settingUrls, type ShardFlags } from "./shards.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { duration, relative, table } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "90", "90s", "5m", "2h", "1d" → seconds. */
export function parseDelay(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * (UNITS[match[2] || "s"] ?? 1) : NaN;
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new InvalidArgumentError("--for must be a duration such as 30s, 5m, 2h or 1d (a bare number is seconds).");
  }
  return seconds;
}

function className(text: string): string {
  if (text.trim() === "") throw new InvalidArgumentError("the job class must not be empty.");
  return text;
}

const NOTICE = `workers apply it within ${refreshInterval.default} s (${refreshInterval.fileKey})`;

/**
 * Runs `write` on every shard (a class's jobs may run on any of them) or on the one Redis chosen with
 * --redis-url / --shard; resolves to the first shard's answer.
 */
async function onEvery<T>(flags: Flags & ShardFlags, io: CliIO, write: (redis: TsqRedis) => Promise<T>): Promise<T> {
  const answers = await Promise.all((await settingUrls(flags, io)).map((url) => withRedis(url, write)));
  return answers[0]!;
}

export function registerSwitches(program: Command, io: CliIO): void {
  const defer = program
    .command("defer")
    .description("re-schedule a job class's jobs instead of running them (a kill switch)")
    .argument("<class>", "job class name as in the payload, e.g. ImportJob", className)
    .option("--for <duration>", "how far each job is pushed back: 30s, 5m, 2h (default 5m)", parseDelay);
  addRedisUrlOption(addJsonOption(defer)).action(async (klass: string, flags: Flags & { for?: number }) => {
    const delay = flags.for ?? DEFAULT_DEFER_DELAY;
    const value = await onEvery(flags, io, (r) => setSwitch(r, klass, { action: "defer", delay }));
    if (flags.json) return printJson(io, { class: klass, ...value });
    io.out(`${klass}: jobs deferred by ${duration(delay)} each until 'tsqctl resume ${klass}'; ${NOTICE}\n`);
  });

  const drop = program
    .command("drop")
    .description("discard a job class's jobs without running them, logging each jid (a kill switch)")
    .argument("<class>", "job class name as in the payload, e.g. ImportJob", className);
  addRedisUrlOption(addJsonOption(drop)).action(async (klass: string, flags: Flags) => {
    const value = await onEvery(flags, io, (r) => setSwitch(r, klass, { action: "drop" }));
    if (flags.json) return printJson(io, { class: klass, ...value });
    io.out(`${klass}: jobs dropped until 'tsqctl resume ${klass}'; ${NOTICE}\n`);
  });

  const resume = program
    .command("resume")
    .description("remove a job class's kill switch: its jobs run again")
    .argument("<class>", "job class name", className);
  addRedisUrlOption(addJsonOption(resume)).action(async (klass: string, flags: Flags) => {
    const removed = await onEvery(flags, io, (r) => removeSwitch(r, klass));
    if (flags.json) return printJson(io, { class: klass, removed });
    io.out(removed ? `${klass}: resumed; ${NOTICE}\n` : `${klass}: no kill switch was set\n`);
  });

  const list = program.command("switches").description("list the kill switches set with defer and drop");
  addRedisUrlOption(addJsonOption(list)).action(async (flags: Flags) => {
    const switches = await withRedis(resolveRedisUrl(flags.redisUrl, io), readSwitches);
    const rows = [...switches].sort(([a], [b]) => a.localeCompare(b));
    if (flags.json)
      return printJson(
        io,
        rows.map(([klass, value]) => ({ class: klass, ...value })),
      );
    if (rows.length === 0) return io.out("no kill switches set\n");
    const now = nowSeconds();
    const lines = table(
      ["CLASS", "ACTION", "DELAY", "SINCE"],
      rows.map(([klass, value]: [string, KillSwitch]) => [
        klass,
        value.action,
        value.action === "defer" ? duration(value.delay) : "",
        value.at > 0 ? relative(value.at, now) : "",
      ]),
    );
    io.out(`${lines.join("\n")}\n`);
  });
}
