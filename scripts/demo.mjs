// `npm run demo`: tsq end to end. Uses REDIS_URL if set, else starts a private redis-server; runs
// `tsq-cluster` (2 children) on the example jobs; feeds it a steady mix (fast, slow, failing into
// retries, scheduled) and prints a one-line summary every 2 s. Stops after --seconds (default 30;
// 0 = until Ctrl-C), or on Ctrl-C, and shuts everything down cleanly.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { seconds: { type: "string", default: "30" } } });
const seconds = Number(values.seconds);
const tsq = await import(join(root, "dist/src/index.js"));
const jobs = await import(join(root, "dist/examples/demoJobs.js"));
const cleanups = [];
const say = (text) => console.log(`\x1b[1m==> ${text}\x1b[0m`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function redisUrl() {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  if (spawnSync("redis-server", ["--version"]).error) {
    console.error(
      "demo: redis-server is not installed. Install it (apt-get install -y redis-server) or set REDIS_URL.",
    );
    process.exit(1);
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "tsq-demo-"));
  // Its own process group, so Ctrl-C in the terminal does not stop Redis before the cluster has stopped.
  const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir], {
    stdio: "ignore",
    detached: true,
  });
  cleanups.push(() => {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 100; i++) {
    if (
      spawnSync("redis-cli", ["-p", String(port), "ping"])
        .stdout?.toString()
        .trim() === "PONG"
    )
      break;
    await sleep(50);
  }
  say(`started a private redis-server on 127.0.0.1:${port}`);
  return `redis://127.0.0.1:${port}/0`;
}

// Ctrl-C (or TERM, HUP) ends the feeding loop; the cluster is then stopped before Redis. A second one
// is passed on to the cluster, which then requeues running jobs at once.
let interrupted = false;
let stopCluster = () => {};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (interrupted) stopCluster();
    interrupted = true;
  });
}
// The reader of our output went away (`npm run demo | head`, or a `| tee` that the same Ctrl-C killed):
// stop as on Ctrl-C, silently, rather than die of EPIPE with the cluster and Redis left running.
process.stdout.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
  interrupted = true;
});
// Whatever ends this process (an uncaught error included), its cluster and Redis end with it.
process.on("exit", () => runCleanups());

function runCleanups() {
  while (cleanups.length > 0) {
    try {
      cleanups.pop()();
    } catch {
      // already gone
    }
  }
}

async function main() {
  const url = await redisUrl();
  const client = tsq.configureClient({ redis: url });
  const redis = client.redis;
  const configDir = mkdtempSync(join(tmpdir(), "tsq-demo-config-"));
  const config = join(configDir, "tsq.yml");
  // A 2 s heartbeat and 1 s poll so the demo moves quickly; production keeps Sidekiq's 10 s and ~5 s.
  writeFileSync(config, "heartbeat_interval: 2\npoll_interval_average: 1\n");
  cleanups.push(() => rmSync(configDir, { recursive: true, force: true }));

  const metricsPort = await freePort();
  const args = [
    "-r",
    join(root, "dist/examples/demoJobs.js"),
    "--processes",
    "2",
    "--metrics-port",
    String(metricsPort),
    "-q",
    "critical,3",
    "-q",
    "default,2",
    "-q",
    "low,1",
    "-c",
    "10",
    "-t",
    "5",
    "-C",
    config,
    "-g",
    "demo",
  ];
  say(`starting: tsq-cluster ${args.join(" ").replace(root + "/", "")}`);
  const cluster = spawn(process.execPath, [join(root, "bin/tsq-cluster.js"), ...args], {
    env: { ...process.env, REDIS_URL: url },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true, // its own process group: the demo relays Ctrl-C itself, once
  });
  cleanups.push(() => {
    try {
      process.kill(-cluster.pid, "SIGKILL");
    } catch {
      // already gone
    }
  });
  let logLines = 0;
  cluster.stdout.on("data", (data) => {
    for (const line of data.toString().split("\n")) {
      if (!line.startsWith("{")) continue;
      logLines++;
      const entry = JSON.parse(line);
      // Per-job start/done lines are counted, not shown; everything else is.
      if (entry.msg === "start" || entry.msg === "done" || entry.msg === "welcome") continue;
      const rest = { ...entry };
      for (const field of ["level", "time", "pid", "hostname"]) delete rest[field];
      console.log(`   log | ${JSON.stringify(rest).slice(0, 220)}`);
    }
  });

  say(`metrics for the whole cluster: curl http://127.0.0.1:${metricsPort}/metrics  (also /healthz, /readyz)`);
  await jobs.ReminderJob.performIn(5, "scheduled 5 s earlier");
  say(
    `feeding jobs; a summary every 2 s; ${seconds > 0 ? `stopping after ${seconds} s or on Ctrl-C` : "Ctrl-C to stop"}`,
  );
  const started = Date.now();
  let tick = 0;
  while (!interrupted && (seconds === 0 || Date.now() - started < seconds * 1000)) {
    await jobs.WelcomeJob.performAsync("bob", tick);
    await jobs.ReportJob.performBulk(Array.from({ length: 200 }, (_, i) => [{ id: tick * 200 + i, rows: 10 }]));
    if (tick % 2 === 0) await jobs.ExportJob.performAsync(tick);
    if (tick % 4 === 0) await jobs.FlakyJob.performAsync();
    if (tick % 5 === 0) await jobs.ReminderJob.performIn(3, `reminder ${tick}`);
    await sleep(500);
    if (++tick % 4 === 0) await summary(redis);
  }
  await summary(redis);

  say("stopping: TERM to tsq-cluster (children finish running jobs, flush stats, leave Redis)");
  stopCluster = () => cluster.kill("SIGTERM");
  stopCluster();
  const code =
    cluster.exitCode ??
    cluster.signalCode ??
    (await new Promise((r) => cluster.on("exit", (c, signal) => r(c ?? signal))));
  console.log(
    `   tsq-cluster exited with ${code}; processes left in Redis: ${await redis.scard("processes")}; ${logLines} log lines`,
  );
  await tsq.closeDefaultClient();
  return code === 0 ? 0 : 1;
}

async function summary(redis) {
  const [processed, failed, welcomed, rows, exports, flaky] = await redis.mget(
    "stat:processed",
    "stat:failed",
    "demo:welcomed",
    "demo:rows",
    "demo:exports",
    "demo:flaky",
  );
  const [retries, scheduled, processes] = await Promise.all([
    redis.zcard("retry"),
    redis.zcard("schedule"),
    redis.scard("processes"),
  ]);
  const latency = async (q) => {
    const last = await redis.lindex(`queue:${q}`, -1);
    return last ? Math.max(0, Date.now() / 1000 - JSON.parse(last).enqueued_at).toFixed(2) : "0.00";
  };
  const sizes = await Promise.all(
    ["critical", "default", "low"].map(async (q) => `${q}=${await redis.llen(`queue:${q}`)}/${await latency(q)}s`),
  );
  console.log(
    `   summary | processed=${processed ?? 0} failed=${failed ?? 0} retries=${retries} scheduled=${scheduled} processes=${processes}` +
      ` | queues size/latency ${sizes.join(" ")} | welcome=${welcomed ?? 0} rows=${rows ?? 0} exports=${exports ?? 0} flaky-ok=${flaky ?? 0}`,
  );
}

let status = 1;
try {
  status = await main();
} catch (error) {
  console.error(error);
} finally {
  runCleanups();
}
process.exit(status);
