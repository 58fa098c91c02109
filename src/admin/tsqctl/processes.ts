/**
 * Processes from the command line, as the Web UI's Busy page and sidekiqmon: `tsqctl processes` lists
 * them with their running jobs; `quiet`, `stop` and `dump` signal them through `<identity>-signals`,
 * which tsq and Sidekiq processes alike act on at their next heartbeat.
 */
import type { Command } from "commander";
import type { Redis } from "ioredis";
import { ProcessSet, WorkSet, type ProcessRecord, type ProcessSignal } from "../api/index.js";
import { nowSeconds } from "../../wire/timestamps.js";
import {
  addJsonOption,
  addRedisUrlOption,
  addYesOption,
  checkConfirmable,
  confirm,
  printJson,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { NotFoundError } from "./actions.js";
import { clip, counted, duration, megabytes, relative, table, utcTime, visible } from "./format.js";
import { processJson, workJson } from "./views.js";

interface Flags {
  all?: boolean;
  yes?: boolean;
  json?: boolean;
  redisUrl?: string;
}

/** Labels shown after the identity, as sidekiqmon's `tags_for`. */
export function processTags(p: ProcessRecord): string {
  const tags = [
    p.tag,
    ...p.labels,
    p.quiet ? "quiet" : "",
    p.leader ? "leader" : "",
    p.embedded ? "embedded" : "",
  ].filter((t) => t !== "");
  return tags.map((t) => `[${t}]`).join(" ");
}

async function processes(flags: Flags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const { list, work, leader } = await withRedis(url, async (redis) => {
    const set = new ProcessSet(redis);
    const list = await set.list();
    return { list, work: await new WorkSet(redis).list(), leader: await set.leader() };
  });
  const totalConcurrency = list.reduce((sum, p) => sum + p.concurrency, 0);
  const totalRssKb = list.reduce((sum, p) => sum + p.rssKb, 0);
  if (flags.json) {
    return printJson(io, {
      size: list.length,
      total_concurrency: totalConcurrency,
      total_rss_kb: totalRssKb,
      busy: list.reduce((sum, p) => sum + p.busy, 0),
      leader,
      processes: list.map(processJson),
      work: work.map(workJson),
    });
  }
  const now = nowSeconds();
  const lines = [
    `${counted(list.length, "process", "processes")}, ${counted(totalConcurrency, "slot")}, ${megabytes(totalRssKb)} RSS`,
  ];
  for (const p of list) {
    const about = [
      `${p.identity} ${processTags(p)}`.trimEnd(),
      `  Started: ${utcTime(p.startedAt)} (${relative(p.startedAt, now)})${p.version ? `   Version: ${p.version}` : ""}`,
      `  Threads: ${p.concurrency} (${p.busy} busy)   RSS: ${megabytes(p.rssKb)}   Last beat: ${relative(p.beat, now)}`,
      `   Queues: ${p.queues.length > 0 ? [...p.queues].sort().join(", ") : "none"}`,
    ];
    lines.push("", ...about.map(visible));
  }
  if (work.length > 0) {
    const rows = work.map((w) => [
      w.process,
      w.tid,
      w.job.jid ?? "-",
      w.job.displayClass ?? "?",
      w.queue,
      clip(w.job.argsSummary(), 30),
      duration(now - w.runAt),
      w.progress ? progressText(w.progress) : "-",
    ]);
    lines.push(
      "",
      ...table(["PROCESS", "TID", "JID", "CLASS", "QUEUE", "ARGS", "RUNNING", "PROGRESS"], rows, new Set([6])),
    );
  }
  io.out(`${lines.join("\n")}\n`);
}

/** `40 {"file":"a.csv"}`: the job's reported number and data (`this.progress`), the data cut to 30 characters. */
function progressText(progress: { n: number; data?: unknown }): string {
  return progress.data === undefined
    ? String(progress.n)
    : `${progress.n} ${clip(JSON.stringify(progress.data) ?? "", 30)}`;
}

const SIGNALS: Record<"quiet" | "stop" | "dump", { signal: ProcessSignal; text: string }> = {
  quiet: { signal: "TSTP", text: "asked to stop fetching jobs (TSTP)" },
  stop: { signal: "TERM", text: "asked to stop (TERM)" },
  dump: { signal: "TTIN", text: "asked to log its threads/busy jobs (TTIN)" },
};

/** Identities to signal: the one named (it must be alive), or every live, non-embedded process. */
async function chooseTargets(redis: Redis, identity: string | undefined): Promise<string[]> {
  const set = new ProcessSet(redis);
  if (identity === undefined) return (await set.list()).filter((p) => !p.embedded).map((p) => p.identity);
  const record = await set.get(identity);
  if (!record) throw new NotFoundError(`no live process ${identity} (see tsqctl processes)`);
  if (record.embedded) throw new UsageError(`${identity} is an embedded process; it ignores remote signals`);
  return [identity];
}

async function signal(
  verb: keyof typeof SIGNALS,
  identity: string | undefined,
  flags: Flags,
  io: CliIO,
): Promise<void> {
  if (identity !== undefined && flags.all) throw new UsageError("give an identity or --all, not both");
  if (identity === undefined && !flags.all)
    throw new UsageError("give a process identity (see tsqctl processes), or --all");
  if (verb === "stop" && flags.all) checkConfirmable(io, flags.yes, "stop --all");
  const url = resolveRedisUrl(flags.redisUrl, io);
  const { signal, text } = SIGNALS[verb];
  const targets = await withRedis(url, async (redis) => {
    const chosen = await chooseTargets(redis, identity);
    if (verb === "stop" && flags.all && chosen.length > 0)
      await confirm(io, flags.yes, `Stop all ${counted(chosen.length, "process", "processes")}?`);
    const set = new ProcessSet(redis);
    for (const id of chosen) await set.signal(id, signal);
    return chosen;
  });
  if (flags.json) return printJson(io, { action: verb, target: "processes", count: targets.length, ids: targets });
  if (targets.length === 0) return io.out("no live processes\n");
  io.out(
    `${targets.map((id) => `${visible(id)}: ${text}`).join("\n")}\n(each acts at its next heartbeat: within 10 s for tsq and Sidekiq 7+, 5 s for 6.x)\n`,
  );
}

export function registerProcesses(program: Command, io: CliIO): void {
  const list = program.command("processes").description("live tsq and Sidekiq processes and the jobs they are running");
  addRedisUrlOption(addJsonOption(list)).action((flags: Flags) => processes(flags, io));

  for (const verb of ["quiet", "stop"] as const) {
    const command = program
      .command(verb)
      .description(
        verb === "quiet"
          ? "make a process stop fetching new jobs (TSTP)"
          : "make a process shut down gracefully (TERM)",
      )
      .argument("[identity]", "the process identity, e.g. host:1234:0123456789ab")
      .option("--all", `every live process${verb === "stop" ? " (asks first)" : ""}`);
    if (verb === "stop") addYesOption(command);
    addRedisUrlOption(addJsonOption(command)).action((identity: string | undefined, flags: Flags) =>
      signal(verb, identity, flags, io),
    );
  }
  const dump = program
    .command("dump")
    .description("make a process log its threads / busy jobs (TTIN)")
    .argument("<identity>", "the process identity");
  addRedisUrlOption(addJsonOption(dump)).action((identity: string, flags: Flags) =>
    signal("dump", identity, flags, io),
  );
}
