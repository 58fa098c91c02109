// `npm run bench:floor`: the enqueue→start latency that this machine and Redis allow before any job
// system is involved. A bare consumer process loops on BLMPOP and reports, for each popped message,
// process.hrtime at the pop minus the hrtime the pusher took just before its LPUSH; pushes are made one
// at a time, each after the previous report and 3 ms later, exactly as `npm run bench` times its latency
// jobs. The difference between this and a system's latency is what the system itself adds.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SAMPLES = Number(process.argv[2] ?? 1000);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { Redis } = await import("ioredis");
const { cleanupAll, installCleanupHandlers, percentile, startRedis } = await import(
  join(root, "dist/scripts/bench/lib.js")
);

const CONSUMER = `
const { Redis } = await import("ioredis");
const [pop, report] = [new Redis(process.env.URL), new Redis(process.env.URL)];
for (;;) {
  const reply = await pop.blmpop(1, 1, "floor:queue", "LEFT", "COUNT", 50);
  if (!reply) continue;
  const at = process.hrtime.bigint();
  for (const message of reply[1]) void report.rpush("floor:latency", String(at - BigInt(message)));
}`;

installCleanupHandlers();
const { url } = await startRedis();
const consumer = spawn(process.execPath, ["--input-type=module", "-e", CONSUMER], {
  cwd: root,
  env: { ...process.env, URL: url },
  stdio: "inherit",
});
const redis = new Redis(url);
try {
  while (Number(/^blocked_clients:(\d+)/m.exec(await redis.info("clients"))?.[1] ?? 0) < 1)
    await new Promise((r) => setTimeout(r, 50));
  const ms = [];
  for (let i = 0; i < SAMPLES; i++) {
    await redis.lpush("floor:queue", String(process.hrtime.bigint()));
    const [, nanos] = await redis.blpop("floor:latency", 5);
    ms.push(Number(nanos) / 1e6);
    await new Promise((r) => setTimeout(r, 3));
  }
  ms.sort((a, b) => a - b);
  const f = (p) => percentile(ms, p).toFixed(2);
  console.log(
    `bare BLMPOP consumer, ${SAMPLES} messages pushed one at a time: p50 ${f(50)} ms, p90 ${f(90)} ms, p99 ${f(99)} ms`,
  );
} finally {
  consumer.kill();
  redis.disconnect();
  await cleanupAll();
}
