// What "all" actions cost on a big set: retry, kill and delete every entry of a 100,000-entry retry
// set, through tsq/api and through `tsqctl` (a process of its own, as an operator runs it). Private
// redis-server; entries look like real failed jobs (error fields, a backtrace-sized message).
//
//   npm run bench:admin [-- --entries 100000]
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { RetrySet } from "../../src/admin/api/sets.js";
import { cleanupAll, installCleanupHandlers, messageOf, startRedis, table } from "./lib.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({ options: { entries: { type: "string", default: "100000" } } });
const ENTRIES = Number(values.entries);
if (!Number.isInteger(ENTRIES) || ENTRIES < 1) {
  console.error("usage: --entries <a positive integer>");
  process.exit(2);
}

async function fill(redis: Redis): Promise<void> {
  await redis.flushdb();
  const now = Date.now() / 1000;
  for (let i = 0; i < ENTRIES; i += 5_000) {
    const members: string[] = [];
    for (let j = i; j < Math.min(ENTRIES, i + 5_000); j++) {
      const job = {
        class: "ImportJob",
        args: [j, `row-${j}`],
        jid: j.toString(16).padStart(24, "0"),
        queue: "default",
        retry: true,
        created_at: now - 60,
        enqueued_at: now - 30,
        failed_at: now - 30,
        retry_count: 2,
        error_class: "RuntimeError",
        error_message: `row ${j} could not be imported: connection reset by peer`,
      };
      members.push(String(now + j), JSON.stringify(job));
    }
    await redis.zadd("retry", ...members);
  }
}

async function timed(fn: () => Promise<unknown>): Promise<[number, unknown]> {
  const t0 = performance.now();
  const result = await fn();
  return [(performance.now() - t0) / 1000, result];
}

function tsqctl(url: string, ...args: string[]): () => Promise<string> {
  return () => {
    const run = spawnSync(process.execPath, [join(ROOT, "bin/tsqctl.js"), ...args, "--yes", "--redis-url", url], {
      encoding: "utf8",
    });
    if (run.status !== 0) throw new Error(`tsqctl ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
    return Promise.resolve(run.stdout.trim());
  };
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const { url } = await startRedis();
  const redis = new Redis(url);
  const set = new RetrySet(redis);
  const rows: (string | number)[][] = [];
  const cases: [string, () => Promise<unknown>, () => Promise<string>][] = [
    ["retry all", () => set.retryAll(), tsqctl(url, "retry", "--all")],
    ["kill all", () => set.killAll(), tsqctl(url, "kill", "--all")],
    ["delete all", () => set.clear(), tsqctl(url, "clear", "retry")],
  ];
  for (const [name, api, cli] of cases) {
    await fill(redis);
    const [apiSeconds, count] = await timed(api);
    await fill(redis);
    const [cliSeconds, said] = await timed(cli);
    rows.push([name, String(count), apiSeconds.toFixed(2), cliSeconds.toFixed(2), String(said)]);
  }
  redis.disconnect();
  console.log(`\n"All" actions on a ${ENTRIES.toLocaleString("en-US")}-entry retry set (seconds)\n`);
  console.log(table(["action", "entries acted on", "tsq/api", "tsqctl", "tsqctl said"], rows));
}

main()
  .catch((error: unknown) => {
    console.error(`bench:admin failed: ${messageOf(error)}`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
