/** Recovery with real processes: poison pills, and a lone process recovered by the next one. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";
import { config, sleep } from "./chaosRun.js";

const handle = useRedis();

test("a job that kills its process every time ends in dead after 3 recoveries while other jobs keep flowing", async () => {
  // A backlog first, then the poison pill, then a steady trickle: children keep working around it.
  await pushJobs(
    handle.url,
    "MarkJob",
    Array.from({ length: 300 }, () => [5]),
  );
  const [poison] = await pushJobs(handle.url, "ExitJob", [[]]);
  const cluster = startTsq(
    [
      "-r",
      TEST_JOBS,
      "--processes",
      "3",
      "-c",
      "5",
      "-t",
      "2",
      "--fetch",
      "reliable",
      "-C",
      config("heartbeat_interval: 1\npoll_interval_average: 1\n"),
    ],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  try {
    const feeder = (async () => {
      for (let i = 0; i < 28; i++) {
        await pushJobs(
          handle.url,
          "MarkJob",
          Array.from({ length: 25 }, () => [5]),
        );
        await sleep(250);
      }
    })();
    const firstCrash = await cluster.waitForLine((l) => l.msg === "child exited unexpectedly", 60_000);
    const doneAtFirstCrash = await handle.redis.llen("done");
    const dead = await eventually(
      async () => (await handle.redis.zrange("dead", 0, -1))[0],
      90_000,
      "the poison pill reaches dead",
    );
    const doneAtDead = await handle.redis.llen("done");
    const job = JSON.parse(dead) as Record<string, unknown>;
    assert.equal(job.jid, poison);
    assert.equal(job.error_class, "PoisonPillError");
    const deadJobs = (await handle.redis.zrange("dead", 0, -1)).map((text) => {
      const { jid, class: klass, error_class } = JSON.parse(text) as Record<string, unknown>;
      return `${String(klass)} ${String(jid)} ${String(error_class)}`;
    });
    assert.deepEqual(deadJobs, [`ExitJob ${poison!} PoisonPillError`], "only the poison pill is dead: no bystander");
    assert.equal(await handle.redis.get(`tsq:recovered:${poison!}`), "4", "3 recoveries, then dead on the 4th death");
    assert.equal(cluster.lines.filter((l) => l.msg === "child exited unexpectedly").length, 4);
    assert.ok(firstCrash);
    console.log(`poison pill: jobs done at the first crash ${doneAtFirstCrash}, when it reached dead ${doneAtDead}`);
    assert.ok(doneAtDead > doneAtFirstCrash, "other jobs completed while the poison pill was killing children");
    await feeder;
    // At least once: a job that finished just before its child died may have run twice.
    await eventually(
      async () => new Set(await handle.redis.lrange("done", 0, -1)).size === 1000,
      60_000,
      "all other jobs ran",
    ).catch(async (error: unknown) => {
      const state = {
        unique: new Set(await handle.redis.lrange("done", 0, -1)).size,
        total: await handle.redis.llen("done"),
        queued: await handle.redis.llen("queue:default"),
        privates: await handle.redis.keys("queue:sq|*"),
        dead: await handle.redis.zcard("dead"),
        retry: await handle.redis.zcard("retry"),
        processes: await handle.redis.smembers("processes"),
      };
      throw new Error(`${String(error)}: ${JSON.stringify(state)}\n${cluster.output().slice(-3000)}`);
    });
  } finally {
    assert.equal(await cluster.stop(), 0);
  }
});

test("a lone tsq SIGKILLed with 10 jobs in flight: the next process to start recovers all 10", async () => {
  const jids = await pushJobs(
    handle.url,
    "SleepJob",
    Array.from({ length: 10 }, () => [60]),
  );
  const cfg = config("heartbeat_interval: 1\nheartbeat_ttl: 3\n");
  const first = startTsq(["-r", TEST_JOBS, "-c", "10", "--fetch", "reliable", "-C", cfg], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 10, 15_000, "10 jobs in flight");
  const [identity] = await handle.redis.smembers("processes");
  first.signal("SIGKILL");
  await first.exited;
  assert.equal(await handle.redis.llen(`queue:sq|${identity!}|default`), 10, "the jobs wait in the private list");
  assert.equal(await handle.redis.llen("queue:default"), 0);
  await eventually(
    async () => (await handle.redis.exists(identity!)) === 0,
    10_000,
    "the dead process's heartbeat expired",
  );
  await handle.redis.del("started");
  const second = startTsq(["-r", TEST_JOBS, "-c", "10", "--fetch", "reliable", "-C", cfg, "-t", "1"], {
    REDIS_URL: handle.url,
  });
  await second.waitForLine(
    (l) => l.msg === "recovered the in-progress jobs of a dead process; they run next" && l.requeued === 10,
  );
  await eventually(
    async () => (await handle.redis.llen("started")) === 10,
    15_000,
    "all 10 recovered and started again",
  );
  assert.deepEqual((await handle.redis.lrange("started", 0, -1)).sort(), [...jids].sort());
  assert.equal(await handle.redis.exists(`queue:sq|${identity!}|default`), 0);
  assert.equal(await handle.redis.sismember("super_processes", identity!), 0);
  await second.stop();
});
