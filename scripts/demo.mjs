// `npm run demo`: tsq end to end in about 15 seconds. Starts a private redis-server (or uses REDIS_URL),
// runs a real `tsq` worker on the example jobs, enqueues immediate, bulk, scheduled and failing jobs,
// and shows what Sidekiq's Web UI would show: stats, the process record, retries.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsq = await import(join(root, "dist/src/index.js"));
const jobs = await import(join(root, "dist/examples/demoJobs.js"));
const cleanups = [];
const say = (text) => console.log(`\x1b[1m==> ${text}\x1b[0m`);

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
    console.error("demo: redis-server is not installed. Install it (apt-get install -y redis-server) or set REDIS_URL.");
    process.exit(1);
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "tsq-demo-"));
  const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir], { stdio: "ignore" });
  cleanups.push(() => { server.kill(); rmSync(dir, { recursive: true, force: true }); });
  for (let i = 0; i < 100; i++) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"]).stdout?.toString().trim() === "PONG") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  say(`started a private redis-server on 127.0.0.1:${port}`);
  return `redis://127.0.0.1:${port}/0`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const url = await redisUrl();
  const client = tsq.configureClient({ redis: url });
  const redis = client.redis;
  const configDir = mkdtempSync(join(tmpdir(), "tsq-demo-config-"));
  const config = join(configDir, "tsq.yml");
  // A 1 s heartbeat and poll so the demo moves quickly; production keeps Sidekiq's 10 s and ~5 s.
  writeFileSync(config, "heartbeat_interval: 1\npoll_interval_average: 1\n");
  cleanups.push(() => rmSync(configDir, { recursive: true, force: true }));

  say("starting a worker: tsq -r dist/examples/demoJobs.js -q critical,2 -q default -c 10");
  const worker = spawn(process.execPath, [join(root, "bin/tsq.js"), "-r", join(root, "dist/examples/demoJobs.js"), "-q", "critical,2", "-q", "default", "-c", "10", "-t", "5", "-C", config, "-g", "demo"], {
    env: { ...process.env, REDIS_URL: url },
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => worker.kill("SIGKILL"));
  let lines = 0;
  worker.stdout.on("data", (data) => {
    for (const line of data.toString().split("\n")) {
      if (!line.startsWith("{")) continue;
      lines++;
      const entry = JSON.parse(line);
      // Show the interesting lines; the 2,000 start/done lines of the bulk are only counted.
      if (entry.class === "ReportJob" && (entry.msg === "start" || entry.msg === "done")) continue;
      const { level, time, pid, hostname, ...rest } = entry;
      console.log(`   worker | ${JSON.stringify(rest)}`);
    }
  });

  say("enqueueing: 3 WelcomeJob, 1,000 ReportJob in bulk, a FlakyJob that fails twice, a ReminderJob in 2 s");
  for (let i = 1; i <= 3; i++) console.log(`   WelcomeJob jid ${await jobs.WelcomeJob.performAsync("bob", i)}`);
  const bulk = await jobs.ReportJob.performBulk(Array.from({ length: 1000 }, (_, i) => [{ id: i, rows: 10 }]));
  console.log(`   ReportJob x ${bulk.length} in ${Math.ceil(bulk.length / 1000)} round trip(s)`);
  console.log(`   FlakyJob jid ${await jobs.FlakyJob.performAsync()}`);
  console.log(`   ReminderJob jid ${await jobs.ReminderJob.performIn(2, "scheduled 2 s ago")}`);

  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline) {
    const [welcomed, rows, flaky, reminder] = await redis.mget("demo:welcomed", "demo:rows", "demo:flaky", "demo:reminder");
    if (welcomed === "3" && rows === "10000" && flaky && reminder) break;
    await sleep(200);
  }
  await sleep(1200); // one more heartbeat flushes the counters
  const [welcomed, rows, flaky, reminder] = await redis.mget("demo:welcomed", "demo:rows", "demo:flaky", "demo:reminder");
  const [processed, failed] = await redis.mget("stat:processed", "stat:failed");
  const [identity] = await redis.smembers("processes");
  const record = identity ? await redis.hgetall(identity) : {};
  say("results");
  console.log(`   WelcomeJob ran ${welcomed} times; ReportJob counted ${rows} rows; FlakyJob ${flaky}; ReminderJob: ${reminder}`);
  console.log(`   stat:processed=${processed} stat:failed=${failed} (Sidekiq's dashboard reads these)`);
  console.log(`   process ${identity}: busy=${record.busy} concurrency=${record.concurrency} quiet=${record.quiet} rss=${record.rss} KB`);
  console.log(`   ${lines} log lines from the worker`);

  say("sending TERM: the worker finishes, flushes stats, leaves the processes set");
  worker.kill("SIGTERM");
  const code = await new Promise((r) => worker.on("exit", (c) => r(c)));
  console.log(`   worker exited with ${code}; processes set now has ${await redis.scard("processes")} members`);
  await tsq.closeDefaultClient();
  const ok = welcomed === "3" && rows === "10000" && Boolean(flaky) && Boolean(reminder) && code === 0;
  say(ok ? "demo finished: everything ran" : "demo finished with missing results (see above)");
  return ok ? 0 : 1;
}

let status = 1;
try {
  status = await main();
} catch (error) {
  console.error(error);
} finally {
  for (const cleanup of cleanups.reverse()) {
    try { cleanup(); } catch {}
  }
}
process.exit(status);
