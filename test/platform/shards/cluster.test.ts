/**
 * Shards with real processes (issue 20, "Must show"): two private redis-servers, queue `a` on the first
 * (the default shard) and `b` on the second. The client routes pushes by queue, one `tsq-cluster`
 * serves both shards, a job on one shard enqueues onto the other, `tsqctl stats` adds both up and
 * /metrics shows both shards' queues.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { ShardMap } from "../../../src/platform/shards/ShardMap.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { request } from "../../metrics/http.js";
import { parseExposition } from "../../metrics/promText.js";
import { tsqctl as runTsqctl } from "../../helpers/tsqctl.js";
import { giveUpAfter } from "../../helpers/timing.js";

const one = useRedis();
const two = useRedis();
const SHARD_JOBS = join(ROOT, "dist/test/jobs/shardJobs.js");

/** A working directory whose config/tsq.yml puts queue b (and its namespace) on the second Redis. */
function appDir(extra = ""): string {
  const dir = scratchDir("tsq-shards");
  writeFileSync(
    join(dir, "tsq.yml"),
    `redis_url: ${one.url}\nheartbeat_interval: 1\nshards:\n  two: { url: "${two.url}", queues: [b] }\n${extra}`,
  );
  return dir;
}

async function tsqctl(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const run = await runTsqctl(
    args,
    { ...process.env, REDIS_URL: "redis://127.0.0.1:1/0" },
    { stripFinalNewline: false },
  );
  return { status: run.exitCode, stdout: run.stdout, stderr: run.stderr };
}

function startCluster(t: TestContext, dir: string, args: string[], port: number): TsqProcess {
  const proc = startTsq(
    ["-r", SHARD_JOBS, ...args, "-C", join(dir, "tsq.yml"), "--metrics-port", String(port)],
    { REDIS_URL: "redis://127.0.0.1:1/0" },
    "bin/tsq-cluster.js",
  );
  t.after(async () => {
    await proc.stop(15_000);
  });
  return proc;
}

test("the client pushes each job to its queue's shard, scheduled ones too", async (t) => {
  const client = new Client({
    redis: one.url,
    shards: { map: new ShardMap(one.url, [{ name: "two", url: two.url, queues: ["b"] }]) },
  });
  t.after(() => client.close());
  await client.push({ class: "ShardCountJob", args: [1], queue: "a" });
  await client.push({ class: "ShardCountJob", args: [2], queue: "b" });
  await client.push({ class: "ShardCountJob", args: [3], queue: "b:eu" }); // b's namespace
  await client.push({ class: "ShardCountJob", args: [4], queue: "b", at: Date.now() / 1000 + 3600 });
  await client.pushBulk({ class: "ShardCountJob", args: [[5], [6]], queue: "b" });
  await client.pushMany([
    { class: "ShardCountJob", args: [7], queue: "a" },
    { class: "ShardCountJob", args: [8], queue: "b" },
  ]);
  assert.equal(await one.redis.llen("queue:a"), 2);
  assert.equal(await one.redis.llen("queue:b"), 0);
  assert.deepEqual((await one.redis.smembers("queues")).sort(), ["a"]);
  assert.equal(await one.redis.zcard("schedule"), 0);
  assert.equal(await two.redis.llen("queue:b"), 4);
  assert.equal(await two.redis.llen("queue:b:eu"), 1);
  assert.deepEqual((await two.redis.smembers("queues")).sort(), ["b", "b:eu"]);
  assert.equal(await two.redis.zcard("schedule"), 1);
  assert.equal(await two.redis.llen("queue:a"), 0);
  // The client's own connection is the home shard's; it opened one more, for shard two.
  assert.equal(client.redisFor("b") === client.redis, false);
  assert.equal(client.ownsQueue("a"), true);
});

test("one tsq-cluster serves both shards; jobs cross shards; tsqctl and /metrics see both", async (t) => {
  const dir = appDir();
  const port = await freePort();
  const cluster = startCluster(t, dir, ["a", "b"], port);
  await cluster.waitForLine((l) => l.msg === "starting tsq-cluster", 20_000);
  // Two children, one per shard: each registers on its own shard's Redis.
  await eventually(
    async () => (await one.redis.scard("processes")) === 1 && (await two.redis.scard("processes")) === 1,
    30_000,
    "a child on each shard",
  );
  const client = new Client({
    redis: one.url,
    shards: { map: new ShardMap(one.url, [{ name: "two", url: two.url, queues: ["b"] }]) },
  });
  t.after(() => client.close());
  const N = 300;
  await client.pushBulk({ class: "HopJob", args: Array.from({ length: N }, (_, i) => [i]), queue: "a" });
  await client.pushBulk({ class: "ShardCountJob", args: Array.from({ length: N }, (_, i) => [i]), queue: "b" });
  // Every HopJob ran on shard one and pushed a ShardCountJob onto queue b, on shard two.
  await eventually(async () => Number(await two.redis.get("ran:b")) === 2 * N, 60_000, `${2 * N} runs on shard two`);
  assert.equal(Number(await one.redis.get("hopped")), N);
  assert.equal(await two.redis.bitcount("ran:b:bits"), N);
  assert.equal(await one.redis.get("ran:b"), null, "no job of queue b ran against shard one");
  assert.equal(await one.redis.exists("queue:b"), 0);

  type StatsJson = { processed: number; processes_size: number; shards: Record<string, { processed: number }> };
  // Counters reach Redis with each heartbeat (1 s here).
  const json = await eventually(
    async () => {
      const stats = await tsqctl("stats", "--json", "-C", join(dir, "tsq.yml"));
      assert.equal(stats.status, 0, stats.stderr);
      const parsed = JSON.parse(stats.stdout) as StatsJson;
      return parsed.processed === 3 * N ? parsed : undefined;
    },
    10_000,
    "tsqctl stats adding up both shards",
    500,
  );
  assert.equal(json.shards.default!.processed, N);
  assert.equal(json.shards.two!.processed, 2 * N);
  assert.equal(json.processed, 3 * N);
  assert.equal(json.processes_size, 2);
  const text = await tsqctl("stats", "-C", join(dir, "tsq.yml"));
  assert.match(text.stdout, /SHARD +PROCESSED/);
  assert.match(text.stdout, /^two +600 /m);
  const onlyTwo = await tsqctl("--shard", "two", "-C", join(dir, "tsq.yml"), "stats", "--json");
  assert.equal(onlyTwo.status, 0, onlyTwo.stderr);
  assert.equal((JSON.parse(onlyTwo.stdout) as { processed: number }).processed, 2 * N);
  const both = await tsqctl("stats", "--shard", "two", "--redis-url", one.url, "-C", join(dir, "tsq.yml"));
  assert.equal(both.status, 2);
  assert.match(both.stderr, /give --shard or --redis-url, not both/);
  const queues = await tsqctl("queues", "--json", "-C", join(dir, "tsq.yml"));
  assert.deepEqual(
    (JSON.parse(queues.stdout) as { name: string; shard: string }[]).map((q) => [q.name, q.shard]).sort(),
    [
      ["a", "default"],
      ["b", "two"],
    ],
  );

  // /metrics: both shards' queues, and the processes of both shards added up.
  await client.pushBulk({ class: "Parked", args: [[1], [2]], queue: "b:parked" });
  await client.push({ class: "Parked", args: [1], queue: "a:parked" });
  const families = await eventually(
    async () => {
      const reply = await request(port, "/metrics");
      const parsed = parseExposition(reply.body);
      const sizes = parsed.get("tsq_queue_size");
      const size = (queue: string) => sizes?.samples.find((s) => s.labels.queue === queue)?.value;
      return size("b:parked") === 2 && size("a:parked") === 1 ? parsed : undefined;
    },
    20_000,
    "queue sizes of both shards in /metrics",
  );
  const processes = families.get("tsq_processes")?.samples[0]?.value;
  assert.equal(processes, 2);
});

test("--dryrun shows each child's shard; a group spanning shards exits 2 naming both", () => {
  const dir = appDir();
  const run = (args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, "bin/tsq-cluster.js"), ...args, "-C", join(dir, "tsq.yml")], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL: "redis://127.0.0.1:1/0" },
      encoding: "utf8",
      timeout: giveUpAfter(30_000),
    });
  const plan = run(["a", "b", "*@two", "--dryrun"]);
  assert.equal(plan.status, 0, plan.stderr);
  assert.match(plan.stdout, /child 0 \(group 0 "a"\): shard default; queues a \(weight 1\);/);
  assert.match(plan.stdout, /child 1 \(group 1 "b"\): shard two; queues b \(weight 1\);/);
  assert.match(plan.stdout, /child 2 \(group 2 "\*@two"\): shard two; queues b \(weight 1\);/);
  const bad = run(["a,b", "--dryrun"]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /has queues on shards default \(a\) and two \(b\)/);
});
