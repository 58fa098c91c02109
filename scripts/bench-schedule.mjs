// `npm run bench:schedule`: the scheduled set at scale. Times moving 100,000 due jobs from `schedule`
// to their queue, and one poll of a 1,000,000-entry `schedule` with nothing due. Private redis-server.
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { Launcher } = await import(join(root, "dist/src/server/Launcher.js"));
const { Poller } = await import(join(root, "dist/src/server/Poller.js"));
const { Registry } = await import(join(root, "dist/src/server/Registry.js"));
const { cleanupAll, inProcessWorkerOptions, installCleanupHandlers, startRedis } = await import(
  join(root, "dist/scripts/bench/lib.js")
);

installCleanupHandlers(); // Ctrl-C stops the private redis-server too
const { url } = await startRedis();
let launcher;
try {
  const options = inProcessWorkerOptions(url, 1);
  launcher = new Launcher(options, new Registry(), { logger: pino({ level: "silent" }) });
  const redis = launcher.ctx.redis;
  const poller = new Poller(launcher.ctx);
  const now = Date.now() / 1000;
  const fill = async (n, score) => {
    for (let i = 0; i < n; i += 10_000) {
      const args = [];
      for (let j = i; j < Math.min(n, i + 10_000); j++)
        args.push(
          String(score(j)),
          `{"class":"NoopJob","args":[${j}],"jid":"${j.toString(16).padStart(24, "0")}","queue":"default","retry":true,"created_at":${now}}`,
        );
      await redis.zadd("schedule", ...args);
    }
  };
  await fill(100_000, () => now - 1);
  let t0 = performance.now();
  const moved = await poller.enqueueDue();
  const moveSeconds = (performance.now() - t0) / 1000;
  await redis.del("queue:default");
  await fill(1_000_000, (j) => now + 3600 + j);
  t0 = performance.now();
  const none = await poller.enqueueDue();
  const pollMs = performance.now() - t0;
  console.log(
    `moved ${moved} due jobs from schedule to their queue in ${moveSeconds.toFixed(2)} s (${(moved / moveSeconds).toFixed(0)} jobs/s)`,
  );
  console.log(
    `one poll of a 1,000,000-entry schedule with nothing due: ${none} moved in ${pollMs.toFixed(2)} ms (one Lua call per polled set)`,
  );
} finally {
  await launcher?.stop();
  await cleanupAll();
}
