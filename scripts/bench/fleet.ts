// What a fleet of N tsq processes costs one Redis, idle and busy, and what the scheduled-job poller
// alone costs as N grows.
//
//   npm run bench:fleet [-- --sizes 1,10,50,100] [-- --window 30] [-- --rate 1000] [-- --concurrency 2]
//
// For each N: N separate `tsq` processes (-c 2 each, basic fetch) against a private redis-server. Once
// every process has its heartbeat in `processes` and the pollers have passed their first wait (10-15 s),
// Redis is watched for `--window` seconds idle, then for the same time while a producer pushes `--rate`
// no-op jobs per second. Each window reports commands/s (INFO total_commands_processed), Redis CPU
// (used_cpu_user + used_cpu_sys, in % of one core) and, from MONITOR, the commands/s of the poller
// alone: its enqueue-due-2.lua calls (EVALSHA of that script) and its SCARD of `processes`.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import {
  cleanupAll,
  installCleanupHandlers,
  makeTempDir,
  messageOf,
  redisCpuSeconds,
  sleep,
  spawnTracked,
  startRedis,
  stopTracked,
  table,
  type TrackedChild,
} from "./lib.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,10,50,100" },
    window: { type: "string", default: "30" },
    rate: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "2" },
  },
});
const SIZES = values.sizes.split(",").map(Number);
const WINDOW_S = Number(values.window);
const RATE = Number(values.rate);
const CONCURRENCY = Number(values.concurrency);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !(WINDOW_S >= 5) || !(RATE > 0)) {
  console.error("usage: --sizes 1,10,50,100 (positive integers) --window <seconds ≥ 5> --rate <jobs/s > 0>");
  process.exit(2);
}

/** The SHA1 ioredis sends with EVALSHA for the poller's script (it hashes the file's text as read). */
const ENQUEUE_DUE_SHA = createHash("sha1")
  .update(readFileSync(join(ROOT, "dist/src/server/enqueue-due-2.lua"), "utf8"))
  .digest("hex");

interface Window {
  commandsPerS: number;
  cpuPercent: number;
  pollerPerS: number;
  jobsPerS: number;
  /** The five busiest commands, "name n/s". */
  top: string;
}

/** Counts the poller's commands among everything MONITOR shows for the duration of `run`. */
async function watch(port: number, admin: Redis, run: (seconds: number) => Promise<number>): Promise<Window> {
  // redis-cli rather than ioredis's monitor(): its connection can fail with "Command queue state error"
  // when MONITOR output arrives before the reply to MONITOR itself.
  const monitor = spawn("redis-cli", ["-p", String(port), "monitor"], { stdio: ["ignore", "pipe", "ignore"] });
  await once(monitor.stdout, "readable");
  let poller = 0;
  const byCommand = new Map<string, number>();
  createInterface({ input: monitor.stdout }).on("line", (line) => {
    // 1795433984.336038 [0 127.0.0.1:35062] "smembers" "paused"
    const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? "");
    const command = args[0]?.toLowerCase();
    if (command === undefined) return;
    const name = command === "scard" || command === "smembers" ? `${command} ${args[1]}` : command;
    byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
    if ((command === "evalsha" && args[1] === ENQUEUE_DUE_SHA) || (command === "scard" && args[1] === "processes"))
      poller++;
  });
  const commands = async () => Number(/total_commands_processed:(\d+)/.exec(await admin.info("stats"))?.[1] ?? 0);
  const [c0, cpu0, t0] = [await commands(), await redisCpuSeconds(admin), Date.now()];
  const jobs = await run(WINDOW_S);
  const [c1, cpu1, t1] = [await commands(), await redisCpuSeconds(admin), Date.now()];
  monitor.kill();
  const seconds = (t1 - t0) / 1000;
  return {
    commandsPerS: (c1 - c0) / seconds,
    cpuPercent: ((cpu1 - cpu0) / seconds) * 100,
    pollerPerS: poller / seconds,
    jobsPerS: jobs / seconds,
    top: [...byCommand]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([name, count]) => `${name} ${(count / seconds).toFixed(1)}/s`)
      .join(", "),
  };
}

/** Pushes RATE no-op jobs a second for `seconds`, in 10 ms ticks; returns how many were taken. */
async function produce(admin: Redis, seconds: number): Promise<number> {
  const backlogBefore = await admin.llen("queue:default");
  const end = Date.now() + seconds * 1000;
  const started = Date.now();
  let pushed = 0;
  while (Date.now() < end) {
    const due = Math.floor(((Date.now() - started) / 1000) * RATE);
    const jobs: string[] = [];
    for (; pushed < due; pushed++) {
      const jid = createHash("md5").update(`${started}:${pushed}`).digest("hex").slice(0, 24);
      const now = Date.now() / 1000;
      jobs.push(
        JSON.stringify({ class: "NoopJob", args: [], jid, queue: "default", created_at: now, enqueued_at: now }),
      );
    }
    if (jobs.length > 0)
      await admin
        .multi()
        .sadd("queues", "default")
        .lpush("queue:default", ...jobs)
        .exec();
    await sleep(10);
  }
  // Fetched, not counted: stat:processed is flushed with the heartbeat, seconds late.
  return pushed - ((await admin.llen("queue:default")) - backlogBefore);
}

async function startFleet(url: string, n: number, dir: string): Promise<TrackedChild[]> {
  const children: TrackedChild[] = [];
  const args = [join(ROOT, "bin/tsq.js"), "-r", join(ROOT, "dist/examples/demoJobs.js"), "-c", String(CONCURRENCY)];
  for (let i = 0; i < n; i++) {
    children.push(
      spawnTracked(`tsq-${i}`, process.execPath, [...args, "--redis-url", url], {
        cwd: dir,
        env: { ...process.env, TSQ_LOG_LEVEL: "warn" },
      }),
    );
    // Ten at a time: a hundred Node processes starting at once starve each other of the two cores.
    if (i % 10 === 9) await sleep(1500);
  }
  return children;
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const redis = await startRedis();
  const admin = new Redis(redis.url);
  const dir = makeTempDir("tsq-fleet-");
  const rows: (string | number)[][] = [];
  for (const n of SIZES) {
    await admin.flushdb();
    const fleet = await startFleet(redis.url, n, dir);
    const deadline = Date.now() + 120_000;
    while ((await admin.scard("processes")) < n) {
      if (Date.now() > deadline) {
        const exited = fleet.filter((child) => child.exitCode !== null || child.signalCode !== null);
        const tail = (exited[0] ?? fleet[0])?.output().tail.join("\n") ?? "";
        throw new Error(
          `only ${await admin.scard("processes")} of ${n} processes started (${exited.length} exited); one said:\n${tail}`,
        );
      }
      await sleep(500);
    }
    await sleep(16_000); // past every poller's first wait (10 + rand*5 s)
    const idle = await watch(redis.port, admin, async (s) => {
      await sleep(s * 1000);
      return 0;
    });
    const busy = await watch(redis.port, admin, (s) => produce(admin, s));
    await Promise.all(fleet.map((child) => stopTracked(child, { graceMs: 15_000 })));
    const fmt = (v: number, d = 1) => v.toFixed(d);
    rows.push([
      n,
      fmt(idle.commandsPerS),
      fmt(idle.cpuPercent, 2),
      fmt(idle.pollerPerS, 2),
      fmt(busy.commandsPerS),
      fmt(busy.cpuPercent, 2),
      fmt(busy.pollerPerS, 2),
      fmt(busy.jobsPerS, 0),
    ]);
    console.log(
      `N=${n}: idle ${fmt(idle.commandsPerS)} cmd/s, poller ${fmt(idle.pollerPerS, 2)} cmd/s; idle top: ${idle.top}`,
    );
  }
  admin.disconnect();
  console.log(
    `\nFleet cost: N tsq processes (-c ${CONCURRENCY}) on one Redis; ${WINDOW_S} s windows; busy = ${RATE} no-op jobs/s\n`,
  );
  console.log(
    table(
      [
        "N",
        "idle cmd/s",
        "idle Redis CPU %",
        "idle poller cmd/s",
        "busy cmd/s",
        "busy Redis CPU %",
        "busy poller cmd/s",
        "jobs/s",
      ],
      rows,
    ),
  );
}

main()
  .catch((error: unknown) => {
    console.error(`bench:fleet failed: ${messageOf(error)}`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
