// What a runaway `class` label costs /metrics (issue 26): raw pushes of 30,000 distinct unknown class
// names into a 4-child `tsq-cluster`, then 5 of the supervisor's GET /metrics (time, size, and the
// supervisor's RSS after each), its peak RSS over the run, and the CPU each idle child burns
// afterwards (utime + stime from /proc/<pid>/stat). Private redis-server; jobs are raw LPUSHes with
// `retry: false`, as a foreign producer would write them.
//
//   npm run bench:metrics [-- --classes 30000 --processes 4 --scrapes 5 --idle 10 --root <checkout with a dist/ build>]
import { join, dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { request } from "node:http";
import { Redis } from "ioredis";
import { PROCESSES, QUEUES, STAT_FAILED, queueKey } from "../../src/wire/keys.js";
import {
  childPids,
  cleanupAll,
  cpuSeconds,
  fmtMb,
  freePort,
  installCleanupHandlers,
  messageOf,
  rssKb,
  sleep,
  spawnTracked,
  startRedis,
  stopTracked,
  table,
} from "./lib.js";

const HERE = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    classes: { type: "string", default: "30000" },
    processes: { type: "string", default: "4" },
    idle: { type: "string", default: "10" },
    scrapes: { type: "string", default: "5" },
    root: { type: "string", default: HERE },
  },
});
const CLASSES = Number(values.classes);
const CHILDREN = Number(values.processes);
const IDLE_S = Number(values.idle); // seconds the idle children's CPU is measured over
const SCRAPES = Number(values.scrapes);
const ROOT = resolve(values.root);
if (![CLASSES, CHILDREN, IDLE_S, SCRAPES].every((n) => Number.isInteger(n) && n > 0)) {
  console.error("usage: --classes <n> --processes <n> --idle <seconds> --scrapes <n>, each a positive integer");
  process.exit(2);
}

/** One GET, timed (ms) with its body size (bytes). */
function scrape(port: number): Promise<{ ms: number; bytes: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolvePromise, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolvePromise({ ms: performance.now() - t0, bytes: body.length, body: body.toString() });
      });
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("GET /metrics took over 60 s")));
    req.end();
  });
}

async function pushRaw(redis: Redis): Promise<void> {
  await redis.sadd(QUEUES, "default");
  const now = Date.now() / 1000;
  for (let i = 0; i < CLASSES; i += 1000) {
    const jobs: string[] = [];
    for (let j = i; j < Math.min(CLASSES, i + 1000); j++) {
      const jid = j.toString(16).padStart(24, "0");
      jobs.push(
        JSON.stringify({ class: `Unknown${j}`, args: [], jid, queue: "default", retry: false, enqueued_at: now }),
      );
    }
    await redis.lpush(queueKey("default"), ...jobs);
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** CPU % (utime + stime from /proc/<pid>/stat) each process used over IDLE_S seconds. */
async function idleCpu(pids: number[]): Promise<string[]> {
  const before = pids.map((pid) => cpuSeconds(pid) ?? 0);
  await sleep(IDLE_S * 1000);
  return pids.map((pid, i) => ((100 * ((cpuSeconds(pid) ?? 0) - before[i]!)) / IDLE_S).toFixed(1));
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const { url } = await startRedis();
  const redis = new Redis(url);
  const port = await freePort();
  const cluster = spawnTracked(
    "tsq-cluster",
    process.execPath,
    [
      join(ROOT, "bin/tsq-cluster.js"),
      ...["--processes", String(CHILDREN), "-c", "10", "-r", join(ROOT, "dist/examples/demoJobs.js")],
      ...["--redis-url", url, "--metrics-port", String(port)],
    ],
    { env: { ...process.env, TSQ_LOG_LEVEL: "warn" } },
  );
  const supervisor = cluster.pid!;
  let peakKb = 0;
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, rssKb(supervisor) ?? 0)), 100);
  try {
    await waitFor(async () => (await redis.scard(PROCESSES)) === CHILDREN, 60_000, "every child to heartbeat");
    const idleBefore = await scrape(port);
    const baseline = await idleCpu(childPids(supervisor)); // the children's idle cost before any class was seen
    const t0 = performance.now();
    await pushRaw(redis);
    const failed = async () => Number((await redis.get(STAT_FAILED)) ?? 0);
    await waitFor(async () => (await failed()) >= CLASSES, 600_000, `${CLASSES} jobs to fail`);
    const drainS = (performance.now() - t0) / 1000;
    await sleep(3000); // a few snapshot pushes
    const rows: (string | number)[][] = [];
    let classValues = 0;
    for (let i = 0; i < SCRAPES; i++) {
      const s = await scrape(port).catch((error: unknown) => ({ ms: NaN, bytes: NaN, body: messageOf(error) }));
      if (Number.isNaN(s.ms)) {
        rows.push([`scrape ${i + 1}`, s.body, "", "", "", ""]);
        continue;
      }
      classValues = new Set([...s.body.matchAll(/class="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1])).size;
      const rss = fmtMb(rssKb(supervisor) ?? 0);
      rows.push([`scrape ${i + 1}`, s.ms.toFixed(0), s.bytes, (s.bytes / 1e6).toFixed(2), classValues, rss]);
    }
    const kids = childPids(supervisor);
    const idlePct = await idleCpu(kids);
    console.log(
      `tsq-cluster at ${ROOT}: ${CHILDREN} children, ${CLASSES} distinct classes pushed raw, drained in ${drainS.toFixed(1)} s`,
    );
    console.log(`scrape before the pushes: ${idleBefore.ms.toFixed(0)} ms, ${(idleBefore.bytes / 1e3).toFixed(0)} KB`);
    console.log(table(["", "ms", "bytes", "MB", "class values", "supervisor RSS"], rows));
    console.log(`supervisor peak RSS: ${fmtMb(peakKb)}`);
    console.log(
      table(
        ["idle child", `CPU % over ${IDLE_S} s, before the pushes`, "after the work"],
        kids.map((pid, i) => [`pid ${pid}`, baseline[i] ?? "", idlePct[i]!]),
      ),
    );
  } finally {
    clearInterval(sampler);
    await stopTracked(cluster, { graceMs: 15_000 });
    redis.disconnect();
    await cleanupAll();
  }
}

main().catch(async (error: unknown) => {
  console.error(`bench:metrics failed: ${messageOf(error)}`);
  await cleanupAll();
  process.exit(1);
});
