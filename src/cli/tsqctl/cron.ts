/**
 * `tsqctl cron`: the periodic schedules the leader stored in Redis (src/cron/CronStore.ts).
 *
 *   tsqctl cron list [--json]      name, expression, zone, class, queue, args, enabled, last and next run
 *   tsqctl cron enqueue <name>     push the schedule's job now (its ticks go on as before); prints the jid
 *   tsqctl cron disable <name>     the leader skips its ticks until `enable`
 *   tsqctl cron enable <name>
 *
 * `disable`/`enable` survive restarts; a later change of the schedule's `enabled:` in the config wins.
 * The next run is computed from the expression and zone when listing (null while disabled), so it is
 * right even while no leader runs. An unknown name is a usage error (exit 2).
 */
import type { Command } from "commander";
import { Client, type PushItem } from "../../client/Client.js";
import { CronStore, type StoredSchedule } from "../../cron/CronStore.js";
import { nextTick } from "../../cron/expression.js";
import { nowSeconds } from "../../timestamps.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, UsageError, withRedis, type CliIO } from "./common.js";
import { argsText, relative, table, utcTime } from "./format.js";

interface Flags {
  redisUrl?: string;
  json?: boolean;
}

/** One schedule as `list --json` prints it. Times are epoch seconds with an ISO 8601 twin, or null. */
export interface CronJson {
  name: string;
  cron: string;
  tz: string;
  class: string;
  queue: string;
  args: unknown[];
  description: string | null;
  enabled: boolean;
  catch_up: boolean;
  /** Where it is declared: the config file, or `static cron of <Class>`. */
  source: string;
  /** When its job was last pushed (by a tick or `cron enqueue`). */
  last_run: number | null;
  last_run_at: string | null;
  last_jid: string | null;
  /** The next tick, computed when listing; null while disabled. */
  next_run: number | null;
  next_run_at: string | null;
}

function iso(seconds: number | undefined): string | null {
  return seconds === undefined ? null : new Date(seconds * 1000).toISOString();
}

export function cronJson(schedule: StoredSchedule, now: number): CronJson {
  const next = schedule.enabled ? safeNext(schedule, now) : undefined;
  return {
    name: schedule.name,
    cron: schedule.cron,
    tz: schedule.tz,
    class: schedule.class,
    queue: schedule.queue ?? "default",
    args: schedule.args,
    description: schedule.description ?? null,
    enabled: schedule.enabled,
    catch_up: schedule.catchUp,
    source: schedule.source,
    last_run: schedule.lastRun ?? null,
    last_run_at: iso(schedule.lastRun),
    last_jid: schedule.lastJid ?? null,
    next_run: next ?? null,
    next_run_at: iso(next),
  };
}

function safeNext(schedule: StoredSchedule, now: number): number | undefined {
  try {
    return nextTick(schedule, Math.floor(now));
  } catch {
    return undefined; // a hand-edited expression: show no next run rather than fail the listing
  }
}

function text(rows: CronJson[], now: number): string {
  if (rows.length === 0) return "no periodic schedules (none declared, or no leader has started yet)\n";
  const when = (time: number | null) => (time === null ? "-" : `${utcTime(time)} (${relative(time, now)})`);
  const cells = rows.map((r) => [r.name, r.cron, r.tz, r.class, r.queue, argsText(r.args, 24), r.enabled ? "yes" : "no", when(r.last_run), when(r.next_run)]);
  return table(["NAME", "CRON", "TZ", "CLASS", "QUEUE", "ARGS", "ENABLED", "LAST RUN", "NEXT RUN"], cells).join("\n") + "\n";
}

async function find(store: CronStore, name: string): Promise<StoredSchedule> {
  const schedule = await store.get(name);
  if (schedule === undefined) {
    const known = (await store.list()).map((s) => s.name).join(", ") || "none";
    throw new UsageError(`no periodic schedule named "${name}" (known: ${known})`);
  }
  return schedule;
}

async function list(flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const schedules = await withRedis(url, (redis) => new CronStore(redis).list());
  const now = Date.now() / 1000;
  const rows = schedules.map((s) => cronJson(s, now));
  if (flags.json) printJson(io, rows);
  else io.out(text(rows, now));
}

async function enqueue(name: string, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const jid = await withRedis(url, async (redis) => {
    const store = new CronStore(redis);
    const schedule = await find(store, name);
    // The schedule's fields over the class's options, as the leader pushes it (without a tick time).
    const item: PushItem = { ...schedule.jobOptions, class: schedule.class, args: schedule.args, cron: schedule.name };
    if (schedule.queue !== undefined) item.queue = schedule.queue;
    const pushed = await new Client({ redis }).push(item);
    if (pushed !== null) await store.recordRun(schedule.name, { jid: pushed, at: nowSeconds() });
    return pushed;
  });
  if (jid === null) throw new Error("the push was stopped by a client middleware");
  if (flags.json) printJson(io, { action: "enqueue", target: name, count: 1, ids: [jid] });
  else io.out(`${jid}\n`);
}

async function setEnabled(name: string, enabled: boolean, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  await withRedis(url, async (redis) => {
    const store = new CronStore(redis);
    await find(store, name);
    await store.setEnabled(name, enabled);
  });
  const action = enabled ? "enable" : "disable";
  if (flags.json) printJson(io, { action, target: name, count: 1, ids: [name] });
  else io.out(`${name} ${action}d\n`);
}

export function registerCron(program: Command, io: CliIO): void {
  const cron = program.command("cron").description("list, enqueue, disable and enable periodic (cron) schedules");
  const command = (name: string, description: string) => addRedisUrlOption(addJsonOption(cron.command(name).description(description)));
  command("list", "list the schedules with their last and next run").action((flags: Flags) => list(flags, io));
  command("enqueue", "push the schedule's job now and print its jid")
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => enqueue(name, flags, io));
  command("disable", "skip the schedule's ticks until enabled")
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => setEnabled(name, false, flags, io));
  command("enable", "resume the schedule's ticks")
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => setEnabled(name, true, flags, io));
}
