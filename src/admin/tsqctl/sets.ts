/**
 * The sorted sets from the command line: `tsqctl retries`, `dead` and `scheduled` list them (newest
 * first, like the Web UI's Retries, Dead and Scheduled pages), and `targetOf` names what the actions
 * in actions.ts work on.
 */
import type { Command } from "commander";
import type { Redis } from "ioredis";
import { DeadSet, RetrySet, ScheduledSet, type JobSet, type SortedEntry } from "../api/index.js";
import { DEAD, RETRY, SCHEDULE, type JobSetName } from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import {
  addJsonOption,
  addRedisUrlOption,
  positiveInteger,
  printJson,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { clip, counted, delimit, relative, table, visible } from "./format.js";
import { DEFAULT_LIMIT } from "./stats.js";
import { entryJson } from "./views.js";

/** What a destructive command or an action works on: a sorted set, or a queue. */
export type Target = { kind: "set"; set: JobSetName; label: string } | { kind: "queue"; queue: string; label: string };

// A Map: a typed word such as `constructor` must not find Object.prototype's member.
const SET_NAMES: ReadonlyMap<string, JobSetName> = new Map([
  ["retry", RETRY],
  ["retries", RETRY],
  ["dead", DEAD],
  ["morgue", DEAD],
  ["scheduled", SCHEDULE],
  ["schedule", SCHEDULE],
]);

const SET_LABELS: Record<JobSetName, string> = {
  [RETRY]: "retry set",
  [DEAD]: "dead set",
  [SCHEDULE]: "scheduled set",
};

/** `retry`/`retries`, `dead`, `scheduled`/`schedule`, or a queue name (`queue:<name>` for a queue named like a set). */
export function targetOf(text: string): Target {
  if (text.startsWith("queue:")) {
    const queue = text.slice("queue:".length);
    if (queue === "") throw new UsageError("queue: needs a queue name, e.g. queue:default");
    return { kind: "queue", queue, label: `queue ${visible(queue)}` };
  }
  if (text === "") throw new UsageError("name a set (retry, dead, scheduled) or a queue");
  const set = SET_NAMES.get(text.toLowerCase());
  return set
    ? { kind: "set", set, label: SET_LABELS[set] }
    : { kind: "queue", queue: text, label: `queue ${visible(text)}` };
}

/** A sorted set by its --set / argument name; anything else is a usage error. */
export function setNamed(text: string, allowed: readonly JobSetName[]): JobSetName {
  const set = SET_NAMES.get(text.toLowerCase());
  if (set === undefined || !allowed.includes(set)) {
    const names = allowed.map((name) => (name === SCHEDULE ? "scheduled" : name)).join(", ");
    throw new UsageError(`unknown set '${text}'; expected one of: ${names}`);
  }
  return set;
}

export function setLabel(set: JobSetName): string {
  return SET_LABELS[set];
}

export function openSet(redis: Redis, set: JobSetName): JobSet {
  if (set === RETRY) return new RetrySet(redis);
  if (set === DEAD) return new DeadSet(redis);
  return new ScheduledSet(redis);
}

interface ListFlags {
  limit: number;
  grep?: string;
  json?: boolean;
  redisUrl?: string;
}

/** Newest first; with a substring, the matching entries (ZSCAN MATCH), newest first. */
async function collect(set: JobSet, flags: ListFlags): Promise<SortedEntry[]> {
  const limit = flags.limit === 0 ? Infinity : flags.limit;
  if (flags.grep === undefined) return set.first(limit);
  const matches: SortedEntry[] = [];
  for await (const entry of set.scan(flags.grep)) matches.push(entry);
  return matches.sort((a, b) => b.score - a.score).slice(0, limit);
}

const WHEN_HEADER: Record<JobSetName, string> = { [RETRY]: "NEXT RETRY", [DEAD]: "DIED", [SCHEDULE]: "RUNS" };

async function list(setName: JobSetName, flags: ListFlags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const { size, entries } = await withRedis(url, async (redis) => {
    const set = openSet(redis, setName);
    return { size: await set.size(), entries: await collect(set, flags) };
  });
  if (flags.json) return printJson(io, { set: setName, size, entries: entries.map(entryJson) });
  const matching =
    flags.grep === undefined ? "" : `, ${delimit(entries.length)} shown matching ${JSON.stringify(flags.grep)}`;
  io.out(`${SET_LABELS[setName]}: ${counted(size, "entry", "entries")}${matching}, newest first\n`);
  if (entries.length === 0) return;
  const now = nowSeconds();
  const rows = entries.map((e) => [
    e.jid ?? "-",
    e.displayClass ?? "(not a job)",
    e.queue,
    clip(e.argsSummary(), 30),
    relative(e.score, now),
    e.retryCount === undefined ? "-" : String(e.retryCount),
    e.errorClass === undefined ? "" : clip(`${e.errorClass}: ${e.errorMessage ?? ""}`, 60),
  ]);
  io.out(
    `${table(["JID", "CLASS", "QUEUE", "ARGS", WHEN_HEADER[setName], "RETRIES", "ERROR"], rows, new Set([5])).join("\n")}\n`,
  );
  if (flags.grep === undefined && size > entries.length)
    io.out(`(${delimit(size - entries.length)} more; use --limit or --grep)\n`);
}

export function registerSets(program: Command, io: CliIO): void {
  const listings: [string, JobSetName, string][] = [
    ["retries", RETRY, "failed jobs waiting for their next attempt"],
    ["dead", DEAD, "jobs that ran out of retries or were killed"],
    ["scheduled", SCHEDULE, "jobs scheduled to run later"],
  ];
  for (const [name, set, description] of listings) {
    const command = program
      .command(name)
      .description(`${description}, newest first`)
      .option(
        "--limit <n>",
        `most entries to list (default ${DEFAULT_LIMIT}; 0 for all)`,
        positiveInteger("--limit", true),
        DEFAULT_LIMIT,
      )
      .option("--grep <text>", "only entries whose JSON contains this text (jid, class, argument, error...)");
    addRedisUrlOption(addJsonOption(command)).action((flags: ListFlags) => list(set, flags, io));
  }
}
