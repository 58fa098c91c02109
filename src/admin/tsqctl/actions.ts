/**
 * Actions on jobs, as the Web UI's buttons: `tsqctl retry`, `kill`, `delete` and `clear`.
 *
 *   tsqctl retry <jid> [--set retry|dead|scheduled]   retry now (scheduled: enqueue now)
 *   tsqctl retry --all [--set retry|dead] [--pace <jobs/s>] --yes
 *   tsqctl kill <jid> [--set retry|scheduled]         move to the dead set
 *   tsqctl kill --all [--set retry|scheduled] --yes
 *   tsqctl delete <retry|dead|scheduled|queue> <jid> --yes
 *   tsqctl clear <retry|dead|scheduled|queue> --yes
 *
 * Everything that cannot be undone or that releases many jobs at once asks first on a terminal and
 * needs --yes otherwise (checked before connecting).
 */
import type { Command } from "commander";
import type { Redis } from "ioredis";
import { Queue, type JobSet, type SortedEntry } from "../api/index.js";
import { DEAD, RETRY, SCHEDULE, type JobSetName } from "../../wire/keys.js";
import {
  addJsonOption,
  addRedisUrlOption,
  addYesOption,
  checkConfirmable,
  confirm,
  positiveInteger,
  printJson,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { counted } from "./format.js";
import { openSet, setLabel, setNamed, targetOf, type Target } from "./sets.js";
import type { ActionJson } from "./views.js";

interface ActionFlags {
  all?: boolean;
  set?: string;
  yes?: boolean;
  json?: boolean;
  redisUrl?: string;
  /** `retry --all`: jobs a second at most. */
  pace?: number;
}

/** The job or target is not there: exit 1. */
export class NotFoundError extends Error {
  override name = "NotFoundError";
}

function report(io: CliIO, flags: ActionFlags, result: ActionJson, text: string): void {
  if (flags.json) printJson(io, result);
  else io.out(`${text}\n`);
}

function jidOrAll(jid: string | undefined, flags: ActionFlags): string | undefined {
  if (jid !== undefined && flags.all) throw new UsageError("give a jid or --all, not both");
  if (jid === undefined && !flags.all) throw new UsageError("give the jid of a job, or --all for every entry");
  if (jid === "") throw new UsageError("the jid must not be empty");
  return jid;
}

/** The first of `sets` holding `jid`. */
async function find(redis: Redis, sets: readonly JobSetName[], jid: string): Promise<SortedEntry> {
  for (const name of sets) {
    const entry = await openSet(redis, name).findJob(jid);
    if (entry) return entry;
  }
  throw new NotFoundError(`no job with jid ${jid} in the ${sets.map(setLabel).join(" or the ")}`);
}

type Verb = "retry" | "kill";
const VERBS = {
  retry: { past: "retried", allowed: [RETRY, DEAD, SCHEDULE], searched: [RETRY, DEAD], bulk: [RETRY, DEAD] },
  kill: { past: "killed", allowed: [RETRY, SCHEDULE], searched: [RETRY, SCHEDULE], bulk: [RETRY, SCHEDULE] },
} as const satisfies Record<Verb, { past: string; allowed: JobSetName[]; searched: JobSetName[]; bulk: JobSetName[] }>;

async function act(verb: Verb, jid: string | undefined, flags: ActionFlags, io: CliIO): Promise<void> {
  const one = jidOrAll(jid, flags);
  const { past, allowed, searched, bulk } = VERBS[verb];
  const chosen = flags.set === undefined ? undefined : setNamed(flags.set, one === undefined ? bulk : allowed);
  if (flags.pace !== undefined && (verb !== "retry" || one !== undefined))
    throw new UsageError("--pace goes with retry --all");
  if (one === undefined) {
    const set = chosen ?? RETRY;
    checkConfirmable(io, flags.yes, `${verb} --all`);
    const url = resolveRedisUrl(flags.redisUrl, io);
    const count = await withRedis(url, async (redis) => {
      const jobs = openSet(redis, set);
      const size = await jobs.size();
      if (size === 0) return 0;
      await confirm(
        io,
        flags.yes,
        `${verb === "retry" ? "Retry" : "Kill"} all ${counted(size, "job")} in the ${setLabel(set)}?`,
      );
      return verb === "retry" ? retryAllPaced(jobs, flags.pace) : jobs.killAll();
    });
    const text = `${past} ${counted(count, "job")} from the ${setLabel(set)}`;
    return report(io, flags, { action: verb, target: set, count, ids: [] }, text);
  }
  const url = resolveRedisUrl(flags.redisUrl, io);
  const entry = await withRedis(url, async (redis) => {
    const found = await find(redis, chosen === undefined ? searched : [chosen], one);
    const done =
      verb === "kill"
        ? await found.kill()
        : found.set.name === SCHEDULE
          ? await found.addToQueue()
          : await found.retry();
    if (!done) throw new NotFoundError(`job ${one} left the ${setLabel(found.set.name)} before it could be ${past}`);
    return found;
  });
  const text = `${past} ${one} (${entry.displayClass ?? "?"}) from the ${setLabel(entry.set.name)}`;
  report(io, flags, { action: verb, target: entry.set.name, count: 1, ids: [one] }, text);
}

/**
 * Retries a whole set, at `pace` jobs a second if given. Ctrl-C (SIGINT) or SIGTERM during a paced retry
 * ends it between batches, so no popped entry is lost; what is left stays in the set.
 */
async function retryAllPaced(jobs: JobSet, pace: number | undefined): Promise<number> {
  if (pace === undefined) return jobs.retryAll();
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop).once("SIGTERM", stop);
  try {
    return await jobs.retryAll({ perSecond: pace, signal: controller.signal });
  } finally {
    process.off("SIGINT", stop).off("SIGTERM", stop);
  }
}

function targetKey(target: Target): string {
  return target.kind === "set" ? target.set : `queue:${target.queue}`;
}

async function deleteJob(targetText: string, jid: string, flags: ActionFlags, io: CliIO): Promise<void> {
  const target = targetOf(targetText);
  if (jid === "") throw new UsageError("the jid must not be empty");
  checkConfirmable(io, flags.yes, "delete");
  const url = resolveRedisUrl(flags.redisUrl, io);
  await withRedis(url, async (redis) => {
    const notFound = () => new NotFoundError(`no job with jid ${jid} in the ${target.label}`);
    if (target.kind === "set") {
      const entry: SortedEntry | null = await openSet(redis, target.set).findJob(jid);
      if (!entry) throw notFound();
      await confirm(io, flags.yes, `Delete job ${jid} (${entry.displayClass ?? "?"}) from the ${target.label}?`);
      if (!(await entry.delete())) throw notFound();
      return;
    }
    const queue = new Queue(redis, target.queue);
    const job = await queue.findJob(jid);
    if (!job) throw notFound();
    await confirm(io, flags.yes, `Delete job ${jid} (${job.displayClass ?? "?"}) from the ${target.label}?`);
    if (!(await queue.deleteJob(job))) throw notFound();
  });
  report(
    io,
    flags,
    { action: "delete", target: targetKey(target), count: 1, ids: [jid] },
    `deleted ${jid} from the ${target.label}`,
  );
}

async function clear(targetText: string, flags: ActionFlags, io: CliIO): Promise<void> {
  const target = targetOf(targetText);
  checkConfirmable(io, flags.yes, `clear ${targetText}`);
  const url = resolveRedisUrl(flags.redisUrl, io);
  const count = await withRedis(url, async (redis) => {
    const store: JobSet | Queue = target.kind === "set" ? openSet(redis, target.set) : new Queue(redis, target.queue);
    const size = await store.size();
    await confirm(io, flags.yes, `Clear the ${target.label} (${counted(size, "job")})?`);
    return store.clear();
  });
  report(
    io,
    flags,
    { action: "clear", target: targetKey(target), count, ids: [] },
    `cleared the ${target.label} (${counted(count, "job")})`,
  );
}

export function registerActions(program: Command, io: CliIO): void {
  for (const verb of ["retry", "kill"] as const) {
    const sets = VERBS[verb].allowed.map((s) => (s === SCHEDULE ? "scheduled" : s)).join("|");
    const command = program
      .command(verb)
      .description(
        verb === "retry"
          ? "run a job now: from the retry set, else the dead set (or --set); --all retries a whole set"
          : "move a job to the dead set: from the retry set, else the scheduled set (or --set); --all kills a whole set",
      )
      .argument("[jid]", "the job's jid")
      .option("--all", `every entry of the set (default retry); asks first`)
      .option("--set <name>", `where to look: ${sets}`);
    if (verb === "retry")
      command.option(
        "--pace <jobs/s>",
        "with --all: at most this many jobs a second (Ctrl-C stops between batches)",
        positiveInteger("--pace"),
      );
    addRedisUrlOption(addJsonOption(addYesOption(command))).action((jid: string | undefined, flags: ActionFlags) =>
      act(verb, jid, flags, io),
    );
  }

  const del = program
    .command("delete")
    .description("delete one job from a set or a queue; asks first")
    .argument("<set>", "retry, dead, scheduled, or a queue name (queue:<name> if it is named like a set)")
    .argument("<jid>", "the job's jid");
  addRedisUrlOption(addJsonOption(addYesOption(del))).action((set: string, jid: string, flags: ActionFlags) =>
    deleteJob(set, jid, flags, io),
  );

  const clr = program
    .command("clear")
    .description("delete every job in a set or a queue (a cleared queue is also forgotten); asks first")
    .argument("<target>", "retry, dead, scheduled, or a queue name (queue:<name> if it is named like a set)");
  addRedisUrlOption(addJsonOption(addYesOption(clr))).action((target: string, flags: ActionFlags) =>
    clear(target, flags, io),
  );
}
