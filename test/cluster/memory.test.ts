/** --max-memory: a child whose RSS passes the limit is stopped gracefully and replaced. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";

const handle = useRedis();

test("a child over --max-memory is stopped gracefully, its job requeued, and a replacement started", async () => {
  const supervisor = startTsq(
    ["-r", TEST_JOBS, "--processes", "1", "-c", "2", "-t", "1", "--max-memory", "200", "--hang-threshold", "8"],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  const first = await eventually(async () => (await handle.redis.smembers("processes"))[0], 15_000, "child registered");
  const [jid] = await pushJobs(handle.url, "MemoryHogJob", [[300, 60]]);
  const line = await supervisor.waitForLine(
    (l) => l.msg === "child over --max-memory; stopping it gracefully and starting a replacement",
    30_000,
  );
  assert.ok((line.rss_mb as number) > 200, `rss ${String(line.rss_mb)} MB`);
  assert.equal(line.limit_mb, 200);
  const replacement = await eventually(
    async () => {
      const ids = await handle.redis.smembers("processes");
      return ids.find((id) => id !== first);
    },
    15_000,
    "a replacement child registered",
  );
  assert.notEqual(replacement, first);
  await eventually(async () => (await handle.redis.sismember("processes", first)) === 0, 15_000, "the old child left");
  // The graceful stop requeued the hog; it starts again in another child: not lost.
  const firstStart = await supervisor.waitForLine((l) => l.jid === jid && l.msg === "start");
  const again = await supervisor.waitForLine(
    (l) => l.jid === jid && l.msg === "start" && l.pid !== firstStart.pid,
    20_000,
  );
  assert.notEqual(again.pid, firstStart.pid);
  supervisor.signal("SIGTERM");
  await supervisor.exited;
});
