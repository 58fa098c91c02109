/**
 * Read-only overviews: `tsqctl stats`, `tsqctl queues` and `tsqctl queue <name>` (Sidekiq's
 * `Stats`, `Queue.all` and `Queue#each`, and sidekiqmon's overview).
 */
import type { Command } from "commander";
import { Queue, Stats } from "../api/index.js";
import { nowSeconds } from "../../wire/timestamps.js";
import {
  addJsonOption,
  addRedisUrlOption,
  positiveInteger,
  printJson,
  RedisUnavailableError,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { clip, counted, delimit, duration, relative, table, visible } from "./format.js";
import { jobJson, statsJson, type QueueJson, type StatsJson } from "./views.js";
import { everyShard, queueUrl, shardMap, sumStats, type ShardFlags } from "./shards.js";

interface JsonFlags {
  json?: boolean;
  redisUrl?: string;
}

/** Entries listed when --limit is not given. */
export const DEFAULT_LIMIT = 50;

async function statsOf(url: string, days: number, shard?: string): Promise<StatsJson> {
  const api = await withRedis(
    url,
    async (redis) => {
      const stats = new Stats(redis);
      return { snapshot: await stats.fetch(), history: await stats.history(days) };
    },
    shard,
  );
  return statsJson(api.snapshot, api.history);
}

async function stats(flags: JsonFlags & ShardFlags & { days: number }, io: CliIO): Promise<void> {
  const shards = await everyShard(flags, io);
  let json: StatsJson & { shards?: Record<string, StatsJson>; unreachable_shards?: Record<string, string> };
  if (shards === undefined) {
    json = await statsOf(resolveRedisUrl(flags.redisUrl, io), flags.days);
  } else {
    // A shard that is down is reported, not fatal: the others' figures are still worth showing.
    const read = await Promise.all(
      shards.map(async ({ shard, url }) => {
        try {
          return { shard, stats: await statsOf(url, flags.days, shard) };
        } catch (error) {
          if (!(error instanceof RedisUnavailableError)) throw error;
          return { shard, error: error.message };
        }
      }),
    );
    const perShard = read.flatMap((r) => (r.stats === undefined ? [] : [{ shard: r.shard, stats: r.stats }]));
    const down = read.flatMap((r) => (r.error === undefined ? [] : [[r.shard, r.error] as const]));
    // No shard answered: there are no figures to show, and zeros would read as an idle fleet.
    if (perShard.length === 0) throw new RedisUnavailableError(down.map(([, message]) => message).join("; "));
    json = {
      ...sumStats(perShard, shardMap(flags, io).shardOf("default")),
      shards: Object.fromEntries(perShard.map(({ shard, stats }) => [shard, stats])),
      ...(down.length > 0 ? { unreachable_shards: Object.fromEntries(down) } : {}),
    };
    for (const [, message] of down) io.err(`tsqctl stats: ${message}; its figures are left out\n`);
  }
  if (flags.json) return printJson(io, json);
  const rows: [string, string][] = [
    ["Processed", delimit(json.processed)],
    ["Failed", delimit(json.failed)],
    // Processes write their busy count and work hash only at each heartbeat (heartbeat_interval, 10 s by
    // default): there is no fresher figure in Redis to read, so the label says how old it may be.
    ["Busy (at last heartbeat)", delimit(json.workers_size)],
    ["Enqueued", delimit(json.enqueued)],
    ["Retries", delimit(json.retry_size)],
    ["Scheduled", delimit(json.scheduled_size)],
    ["Dead", delimit(json.dead_size)],
    ["Processes", delimit(json.processes_size)],
    ["Default latency", duration(json.default_queue_latency)],
  ];
  const lines = table(["STAT", "VALUE"], rows, new Set([1]));
  const days = Object.keys(json.history.processed);
  const history = table(
    ["DAY (UTC)", "PROCESSED", "FAILED"],
    days.map((day) => [day, delimit(json.history.processed[day] ?? 0), delimit(json.history.failed[day] ?? 0)]),
    new Set([1, 2]),
  );
  const perShard = Object.entries(json.shards ?? {}).map(([shard, s]) => [
    shard,
    delimit(s.processed),
    delimit(s.failed),
    delimit(s.enqueued),
    delimit(s.retry_size),
    delimit(s.dead_size),
    delimit(s.processes_size),
  ]);
  const downRows = Object.keys(json.unreachable_shards ?? {}).map((shard) => [
    shard,
    "unreachable",
    "-",
    "-",
    "-",
    "-",
    "-",
  ]);
  perShard.push(...downRows);
  const shardTable =
    perShard.length === 0
      ? []
      : ["", ...table(["SHARD", "PROCESSED", "FAILED", "ENQUEUED", "RETRIES", "DEAD", "PROCESSES"], perShard, NUMERIC)];
  io.out(`${[...lines, ...shardTable, "", ...history].join("\n")}\n`);
}

const NUMERIC = new Set([1, 2, 3, 4, 5, 6]);

export async function queueSummaries(queues: Queue[]): Promise<QueueJson[]> {
  const now = nowSeconds();
  return Promise.all(
    queues.map(async (q) => ({
      name: q.name,
      size: await q.size(),
      latency: await q.latency(now),
      paused: await q.paused(),
    })),
  );
}

async function queues(flags: JsonFlags & ShardFlags, io: CliIO): Promise<void> {
  const shards = await everyShard(flags, io);
  const read = (url: string, shard?: string) =>
    withRedis(url, async (redis) => queueSummaries(await Queue.all(redis)), shard);
  let summaries: (QueueJson & { shard?: string })[];
  let down: [string, string][] = [];
  if (shards === undefined) {
    summaries = await read(resolveRedisUrl(flags.redisUrl, io));
  } else {
    // As `stats`: a shard that is down is reported, not fatal; the others' queues are still listed.
    const perShard = await Promise.all(
      shards.map(async ({ shard, url }) => {
        try {
          return { shard, queues: (await read(url, shard)).map((queue) => ({ ...queue, shard })) };
        } catch (error) {
          if (!(error instanceof RedisUnavailableError)) throw error;
          return { shard, queues: [], error: error.message };
        }
      }),
    );
    summaries = perShard.flatMap((r) => r.queues);
    down = perShard.flatMap((r) => (r.error === undefined ? [] : [[r.shard, r.error] as [string, string]]));
    for (const [, message] of down) io.err(`tsqctl queues: ${message}; its queues are left out\n`);
  }
  if (flags.json) return printJson(io, summaries);
  const marks = down.map(([shard]) => `shard "${visible(shard)}": unreachable, its queues are not listed\n`).join("");
  if (summaries.length === 0) return io.out(`no queues\n${marks}`);
  const rows = summaries.map((q) => [
    q.name,
    delimit(q.size),
    duration(q.latency),
    q.paused ? "paused" : "",
    ...(shards ? [q.shard ?? ""] : []),
  ]);
  const header = ["QUEUE", "SIZE", "LATENCY", "PAUSED", ...(shards ? ["SHARD"] : [])];
  io.out(`${table(header, rows, new Set([1, 2])).join("\n")}\n${marks}`);
}

async function queue(name: string, flags: JsonFlags & ShardFlags & { limit: number }, io: CliIO): Promise<void> {
  if (name === "") throw new UsageError("the queue name must not be empty");
  const queueName = name.startsWith("queue:") ? name.slice("queue:".length) : name;
  const url = queueUrl(flags, io, queueName);
  const result = await withRedis(url, async (redis) => {
    const q = new Queue(redis, queueName);
    const jobs = await q.first(flags.limit === 0 ? Infinity : flags.limit);
    return { size: await q.size(), latency: await q.latency(), jobs };
  });
  if (flags.json) {
    return printJson(io, {
      name: queueName,
      size: result.size,
      latency: result.latency,
      jobs: result.jobs.map(jobJson),
    });
  }
  const now = nowSeconds();
  io.out(
    `queue ${visible(queueName)}: ${counted(result.size, "job")}, latency ${duration(result.latency)}, newest first\n`,
  );
  if (result.jobs.length === 0) return;
  const rows = result.jobs.map((job) => [
    job.jid ?? "-",
    job.displayClass ?? "(not a job)",
    clip(job.argsSummary(), 40),
    job.enqueuedAt === undefined ? "-" : relative(job.enqueuedAt, now),
  ]);
  io.out(`${table(["JID", "CLASS", "ARGS", "ENQUEUED"], rows).join("\n")}\n`);
  if (result.size > result.jobs.length) io.out(`(${delimit(result.size - result.jobs.length)} more; use --limit)\n`);
}

export function registerStats(program: Command, io: CliIO): void {
  const statsCommand = program
    .command("stats")
    .description(
      "processed/failed counters, set sizes, busy jobs (as of each process's last heartbeat, every 10 s by default), and daily history (Sidekiq::Stats)",
    )
    .option("--days <n>", "days of history, newest first (default 7)", positiveInteger("--days"), 7);
  addRedisUrlOption(addJsonOption(statsCommand)).action((flags: JsonFlags & ShardFlags & { days: number }) =>
    stats(flags, io),
  );

  const queuesCommand = program
    .command("queues")
    .description("every known queue with its size, latency and whether it is paused");
  addRedisUrlOption(addJsonOption(queuesCommand)).action((flags: JsonFlags & ShardFlags) => queues(flags, io));

  const queueCommand = program
    .command("queue")
    .description("the jobs waiting in one queue, newest first")
    .argument("<name>", "queue name, e.g. default")
    .option(
      "--limit <n>",
      `most jobs to list (default ${DEFAULT_LIMIT}; 0 for all)`,
      positiveInteger("--limit", true),
      DEFAULT_LIMIT,
    );
  addRedisUrlOption(addJsonOption(queueCommand)).action(
    (name: string, flags: JsonFlags & ShardFlags & { limit: number }) => queue(name, flags, io),
  );
}
