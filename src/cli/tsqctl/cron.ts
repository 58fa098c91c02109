/**
 * `tsqctl cron`: the periodic schedules the leader stored in Redis (src/cron/CronStore.ts), and beside
 * them sidekiq-cron's (src/cli/tsqctl/sidekiqCron.ts), each marked by its scheduler.
 *
 *   tsqctl cron list [--json]      scheduler, name, expression, zone, class, queue, args, enabled, last and next run
 *   tsqctl cron enqueue <name>     push the schedule's job now (its ticks go on as before); prints the jid
 *   tsqctl cron disable <name>     the leader (or sidekiq-cron's poller) skips its ticks until `enable`
 *   tsqctl cron enable <name>
 *
 * A name both schedulers use needs `--scheduler tsq|sidekiq-cron`. For tsq's schedules `disable`/`enable`
 * survive restarts; a later change of the schedule's `enabled:` in the config wins.
 * The next run is computed from the expression and zone when listing (null while disabled), so it is
 * right even while no leader runs. An unknown name is a usage error (exit 2).
 */
import { Option, type Command } from "commander";
import { Client, type PushItem } from "../../client/Client.js";
import { CronStore, type StoredSchedule } from "../../cron/CronStore.js";
import { SidekiqCronStore, type SidekiqCronSchedule } from "../../cron/SidekiqCronStore.js";
import type { TsqRedis } from "../../redis/connection.js";
import { nextTick } from "../../cron/expression.js";
import { nowSeconds } from "../../timestamps.js";
import {
  addJsonOption,
  addRedisUrlOption,
  printJson,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { argsText, relative, table, utcTime } from "./format.js";
import { enqueueSidekiqCron, listSidekiqCron } from "./sidekiqCron.js";

export type Scheduler = "tsq" | "sidekiq-cron";

interface Flags {
  redisUrl?: string;
  json?: boolean;
  scheduler?: Scheduler;
}

/** One schedule as `list --json` prints it. Times are epoch seconds with an ISO 8601 twin, or null. */
export interface CronJson {
  /** Which scheduler owns it: tsq's leader, or sidekiq-cron (Ruby, and tsq processes that opt in). */
  scheduler: Scheduler;
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
    scheduler: "tsq",
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
  const cells = rows.map((r) => [
    r.scheduler,
    r.name,
    r.cron,
    r.tz,
    r.class,
    r.queue,
    argsText(r.args, 24),
    r.enabled ? "yes" : "no",
    when(r.last_run),
    when(r.next_run),
  ]);
  return (
    table(["SCHEDULER", "NAME", "CRON", "TZ", "CLASS", "QUEUE", "ARGS", "ENABLED", "LAST RUN", "NEXT RUN"], cells).join(
      "\n",
    ) + "\n"
  );
}

type Found =
  { scheduler: "tsq"; schedule: StoredSchedule } | { scheduler: "sidekiq-cron"; schedule: SidekiqCronSchedule };

/** The schedule named `name`, in the scheduler `--scheduler` names or the only one that has it. */
async function find(redis: TsqRedis, name: string, scheduler: Scheduler | undefined): Promise<Found> {
  const own = scheduler === "sidekiq-cron" ? undefined : await new CronStore(redis).get(name);
  const theirs = scheduler === "tsq" ? undefined : await new SidekiqCronStore(redis).get(name);
  if (own && theirs) {
    throw new UsageError(
      `both tsq and sidekiq-cron have a schedule named "${name}"; choose one with --scheduler tsq|sidekiq-cron`,
    );
  }
  if (own) return { scheduler: "tsq", schedule: own };
  if (theirs) return { scheduler: "sidekiq-cron", schedule: theirs };
  const names = [
    ...(await new CronStore(redis).list()).map((s) => s.name),
    ...(await new SidekiqCronStore(redis).list()).map((s) => `${s.name} (sidekiq-cron)`),
  ];
  throw new UsageError(`no periodic schedule named "${name}" (known: ${names.join(", ") || "none"})`);
}

async function list(flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const now = Date.now() / 1000;
  const rows = await withRedis(url, async (redis) => [
    ...(await new CronStore(redis).list()).map((s) => cronJson(s, now)),
    ...(await listSidekiqCron(redis, now)),
  ]);
  if (flags.json) printJson(io, rows);
  else io.out(text(rows, now));
}

async function enqueue(name: string, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const jid = await withRedis(url, async (redis) => {
    const found = await find(redis, name, flags.scheduler);
    if (found.scheduler === "sidekiq-cron") return enqueueSidekiqCron(redis, found.schedule);
    const { schedule } = found;
    // The schedule's fields over the class's options, as the leader pushes it (without a tick time).
    const item: PushItem = { ...schedule.jobOptions, class: schedule.class, args: schedule.args, cron: schedule.name };
    if (schedule.queue !== undefined) item.queue = schedule.queue;
    const pushed = await new Client({ redis }).push(item);
    if (pushed !== null) await new CronStore(redis).recordRun(schedule.name, { jid: pushed, at: nowSeconds() });
    return pushed;
  });
  if (jid === null) throw new Error("the push was stopped by a client middleware");
  if (flags.json) printJson(io, { action: "enqueue", target: name, count: 1, ids: [jid] });
  else io.out(`${jid}\n`);
}

async function setEnabled(name: string, enabled: boolean, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  await withRedis(url, async (redis) => {
    const found = await find(redis, name, flags.scheduler);
    if (found.scheduler === "sidekiq-cron") await new SidekiqCronStore(redis).setEnabled(name, enabled);
    else await new CronStore(redis).setEnabled(name, enabled);
  });
  const action = enabled ? "enable" : "disable";
  if (flags.json) printJson(io, { action, target: name, count: 1, ids: [name] });
  else io.out(`${name} ${action}d\n`);
}

/** `--scheduler`, for a name both schedulers use. */
function addSchedulerOption(command: Command): Command {
  return command.addOption(
    new Option("--scheduler <scheduler>", "which scheduler's schedule, when both have the name").choices([
      "tsq",
      "sidekiq-cron",
    ]),
  );
}

export function registerCron(program: Command, io: CliIO): void {
  const cron = program.command("cron").description("list, enqueue, disable and enable periodic (cron) schedules");
  const command = (name: string, description: string) =>
    addRedisUrlOption(addJsonOption(cron.command(name).description(description)));
  command("list", "list the schedules with their last and next run").action((flags: Flags) => list(flags, io));
  addSchedulerOption(command("enqueue", "push the schedule's job now and print its jid"))
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => enqueue(name, flags, io));
  addSchedulerOption(command("disable", "skip the schedule's ticks until enabled"))
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => setEnabled(name, false, flags, io));
  addSchedulerOption(command("enable", "resume the schedule's ticks"))
    .argument("<name>", "schedule name")
    .action((name: string, flags: Flags) => setEnabled(name, true, flags, io));
}
