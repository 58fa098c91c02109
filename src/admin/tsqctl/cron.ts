/**
 * `tsqctl cron`: the periodic schedules the leader stored in Redis (src/features/cron/CronStore.ts), and beside
 * them sidekiq-cron's, each marked by its scheduler.
 *
 *   tsqctl cron list [--json]      scheduler, name, expression, zone, class, queue, args, enabled, last and next run
 *   tsqctl cron enqueue <name>     push the schedule's job now (its ticks go on as before); prints the jid
 *   tsqctl cron disable <name>     the leader (or sidekiq-cron's poller) skips its ticks until `enable`
 *   tsqctl cron enable <name>
 *
 * A name both schedulers use needs `--scheduler tsq|sidekiq-cron`. The work is tsq/api's CronSchedules
 * (shared with the dashboard's Cron page). An unknown name is a usage error (exit 2).
 */
import { Option, type Command } from "commander";
import { CronSchedules, type CronJson, type Scheduler } from "../api/CronSchedules.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";
import { argsText, relative, table, utcTime } from "./format.js";

export type { CronJson, Scheduler };

interface Flags {
  redisUrl?: string;
  json?: boolean;
  scheduler?: Scheduler;
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

async function list(flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const now = Date.now() / 1000;
  const rows = await withRedis(url, (redis) => new CronSchedules(redis).list(now));
  if (flags.json) printJson(io, rows);
  else io.out(text(rows, now));
}

async function enqueue(name: string, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const jid = await withRedis(url, (redis) => new CronSchedules(redis).enqueue(name, flags.scheduler));
  if (jid === null) throw new Error("the push was stopped by a client middleware");
  if (flags.json) printJson(io, { action: "enqueue", target: name, count: 1, ids: [jid] });
  else io.out(`${jid}\n`);
}

async function setEnabled(name: string, enabled: boolean, flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  await withRedis(url, (redis) => new CronSchedules(redis).setEnabled(name, enabled, flags.scheduler));
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
