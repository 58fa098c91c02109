/**
 * Redis Cluster mode (docs/redis-connections.md): a real six-node cluster on loopback (3 masters, 3
 * replicas). A slot group's keys carry its hash tag and share a slot; the client routes each queue to
 * its own group; real `tsq` processes configured with `redis: { cluster: [...] }` run the jobs with basic
 * and reliable fetch, retry them through the group's retry set and poller, bury them in its dead set,
 * and push across groups from a job.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { Job } from "../../../src/client/Job.js";
import { Worker } from "../../../src/library/Worker.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { useRedisCluster, type RedisClusterSetup } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { tsqctl as runTsqctl } from "../../helpers/tsqctl.js";

const record = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/clusterJobs.js");

const cluster = useRedisCluster();
function theCluster(): Promise<RedisClusterSetup> {
  return Promise.resolve(cluster);
}

/** The value of `key` as stored on the cluster (read through the master serving its slot). */
async function slotOf(setup: RedisClusterSetup, key: string): Promise<number> {
  const [master] = await setup.masters();
  return Number(await setup.node(master!).call("CLUSTER", "KEYSLOT", key));
}

function configFile(setup: RedisClusterSetup, extra = ""): string {
  const dir = scratchDir("tsq-rcluster");
  const nodes = setup.nodes.map((node) => `"127.0.0.1:${node.port}"`).join(", ");
  const file = join(dir, "tsq.yml");
  writeFileSync(
    file,
    `redis: { cluster: [${nodes}] }\nheartbeat_interval: 1\naverage_scheduled_poll_interval: 1\n${extra}`,
  );
  return file;
}

function worker(file: string, args: string[]): TsqProcess {
  return startTsq(["-r", JOBS, "-C", file, ...args], {
    TSQ_RECORD_URL: record.url,
    TSQ_LOG_FORMAT: "json",
    REDIS_URL: "redis://127.0.0.1:1/0",
  });
}

test("a slot group's keys carry its hash tag and share one slot", async () => {
  const setup = await theCluster();
  const group = connect(`${setup.url}/mail`, { name: "tsq-test" });
  try {
    await group.multi().lpush("queue:mail", "x").sadd("queues", "mail").zadd("retry", 1, "y").exec();
    const slot = await slotOf(setup, "{mail}");
    const master = setup.node(await setup.masterOf(slot));
    assert.deepEqual((await master.keys("*")).filter((key) => key.startsWith("{mail}")).sort(), [
      "{mail}queue:mail",
      "{mail}queues",
      "{mail}retry",
    ]);
    for (const key of ["{mail}queue:mail", "{mail}queues", "{mail}retry"]) assert.equal(await slotOf(setup, key), slot);
    await group.del("queue:mail", "queues", "retry");
  } finally {
    group.disconnect();
  }
});

test("a client on a cluster URL puts each queue in its own slot group", async () => {
  const setup = await theCluster();
  const client = new Client({ redis: setup.url });
  try {
    await client.push({ class: "ClusterRecordJob", queue: "alpha", args: [0] });
    await client.pushBulk({ class: "ClusterRecordJob", queue: "beta", args: [[0], [0]] });
    await client.push({ class: "ClusterRecordJob", queue: "alpha", args: [0], at: Date.now() / 1000 + 3600 });
    const raw = connect(setup.url, { name: "tsq-test" });
    try {
      assert.equal(await raw.llen("{alpha}queue:alpha"), 1);
      assert.equal(await raw.llen("{beta}queue:beta"), 2);
      assert.equal(await raw.zcard("{alpha}schedule"), 1);
      assert.deepEqual(await raw.smembers("{beta}queues"), ["beta"]);
      await raw.del("{alpha}queue:alpha", "{alpha}schedule", "{alpha}queues");
      await raw.del("{beta}queue:beta", "{beta}queues");
    } finally {
      raw.disconnect();
    }
  } finally {
    await client.close();
  }
});

for (const fetch of ["basic", "reliable"] as const) {
  test(`tsq on the cluster (${fetch} fetch): jobs run, retry through the poller, die, and hop groups`, async (t) => {
    const setup = await theCluster();
    await record.redis.flushdb();
    const file = configFile(setup);
    const queue = `work-${fetch}`;
    const other = `other-${fetch}`;
    const client = new Client({ redis: setup.url });
    t.after(() => client.close());
    const recordJids = await client.pushBulk({
      class: "ClusterRecordJob",
      queue,
      args: Array.from({ length: 200 }, () => [0]),
    });
    const flaky = await client.push({ class: "ClusterFlakyJob", queue, args: [] });
    const doomed = await client.push({ class: "ClusterDoomedJob", queue, args: [], retry: 1 });
    await client.push({ class: "ClusterHopJob", queue, args: [other] });

    const main = worker(file, ["-q", queue, "--fetch", fetch, "-c", "5"]);
    const hop = worker(file, ["-q", other, "--fetch", fetch, "-c", "2"]);
    t.after(async () => {
      await Promise.all([main.stop(15_000), hop.stop(15_000)]);
    });
    const done = () => record.redis.scard("done");
    // 200 records, the flaky job's second run, and the job the hop pushed to the other group.
    await eventually(
      async () => (await done()) === 202,
      60_000,
      `not every job ran: ${await done()}/202\n${main.output().slice(-3000)}\n${hop.output().slice(-2000)}`,
      100,
    );
    assert.equal(await record.redis.sismember("done", flaky!), 1);
    for (const jid of recordJids.slice(0, 5)) assert.equal(await record.redis.sismember("done", jid!), 1);
    assert.equal(Number(await record.redis.get(`ran:${other}`)), 1, "the hop's job ran in the other group");
    const raw = connect(setup.url, { name: "tsq-test" });
    t.after(() => raw.disconnect());
    await eventually(
      async () => (await raw.zcard(`{${queue}}dead`)) === 1,
      30_000,
      `the doomed job did not reach its group's dead set\n${main.output().slice(-3000)}`,
    );
    const dead = JSON.parse((await raw.zrange(`{${queue}}dead`, 0, -1))[0]!) as { jid: string; retry_count: number };
    assert.equal(dead.jid, doomed);
    assert.equal(dead.retry_count, 1);
    assert.equal(await raw.llen(`{${queue}}queue:${queue}`), 0);
    assert.equal(await raw.zcard(`{${queue}}retry`), 0);
    assert.equal(Number(await record.redis.get("runs")), 202, "a job ran twice");
    // The process record and the stats live in the group the process serves.
    assert.ok((await raw.scard(`{${queue}}processes`)) >= 1);
    await eventually(
      async () => Number(await raw.get(`{${queue}}stat:processed`)) >= 201,
      20_000,
      "stats were not flushed into the group",
    );
    assert.equal(await main.stop(15_000), 0);
    assert.equal(await hop.stop(15_000), 0);
    if (fetch === "reliable") {
      const lists = (
        await setup.node(await setup.masterOf(await slotOf(setup, `{${queue}}`))).keys(`{${queue}}queue:sq|*`)
      ).length;
      assert.equal(lists, 0, "a private list was left behind");
    }
  });
}

test("tsqctl stats and queues add up every slot group found on the cluster", async (t) => {
  const setup = await theCluster();
  const client = new Client({ redis: setup.url });
  t.after(() => client.close());
  await client.pushBulk({ class: "ClusterRecordJob", queue: "count-a", args: [[0], [0]] });
  await client.push({ class: "ClusterRecordJob", queue: "count-b", args: [0] });
  const env = { ...process.env, REDIS_URL: "redis://127.0.0.1:1/0" };
  const queues = await runTsqctl(["queues", "--json", "--redis-url", setup.url], env);
  assert.equal(queues.exitCode, 0, queues.stderr);
  const listed = JSON.parse(queues.stdout) as { name: string; size: number; shard?: string }[];
  assert.deepEqual(
    listed.filter((q) => q.name.startsWith("count-")).map((q) => [q.name, q.size, q.shard]),
    [
      ["count-a", 2, "count-a"],
      ["count-b", 1, "count-b"],
    ],
  );
  const stats = await runTsqctl(["stats", "--json", "--redis-url", setup.url], env);
  assert.equal(stats.exitCode, 0, stats.stderr);
  const json = JSON.parse(stats.stdout) as { enqueued: number; shards: Record<string, { enqueued: number }> };
  assert.equal(json.shards["count-a"]?.enqueued, 2);
  assert.equal(json.shards["count-b"]?.enqueued, 1);
  assert.ok(json.enqueued >= 3);
  const paused = await runTsqctl(["pause", "count-b", "--redis-url", setup.url], env);
  assert.equal(paused.exitCode, 0, paused.stderr);
  const raw = connect(setup.url, { name: "tsq-test" });
  t.after(() => raw.disconnect());
  assert.deepEqual(
    await raw.smembers("{count-b}paused"),
    ["count-b"],
    "the pause was not written in the queue's group",
  );
});

/** What refuses to run on a cluster, each named with its reason at start (docs/redis-connections.md). */
const REFUSALS: { feature: string; jobs: string; args: string[]; config?: string; message: RegExp }[] = [
  {
    feature: "fetch order across slot groups",
    jobs: JOBS,
    args: ["-q", "first,2", "-q", "second,1"],
    message: /a process serves one slot group.*first \(group first\) and second \(group second\)/,
  },
  {
    feature: "durable jobs",
    jobs: join(ROOT, "dist/test/jobs/durableJobs.js"),
    args: ["-q", "default"],
    message: /durable jobs \(DurableJob\) does not run on a Redis Cluster: a signal is sent by event name/,
  },
  {
    feature: "job outcomes",
    jobs: join(ROOT, "dist/test/jobs/outcomeJobs.js"),
    args: ["-q", "default"],
    message: /job outcomes \(static options result: .*\) does not run on a Redis Cluster/,
  },
  {
    feature: "sidekiq_cron",
    jobs: JOBS,
    args: ["-q", "default"],
    config: "sidekiq_cron: true\n",
    message: /sidekiq_cron does not run on a Redis Cluster: .*Ruby Sidekiq cannot join/,
  },
];

for (const refusal of REFUSALS) {
  test(`on a cluster, ${refusal.feature} refuses at start, naming itself and the reason`, async () => {
    const setup = await theCluster();
    const proc = startTsq(["-r", refusal.jobs, "-C", configFile(setup, refusal.config), ...refusal.args], {
      TSQ_RECORD_URL: record.url,
      REDIS_URL: "redis://127.0.0.1:1/0",
    });
    const code = await proc.exited;
    assert.notEqual(code, 0, proc.output());
    assert.match(proc.output().replace(/\s+/g, " "), refusal.message);
  });
}

test("a Worker built in code on a cluster URL serves its queue's slot group", async (t) => {
  const setup = await theCluster();
  const ran: string[] = [];
  class LibraryJob extends Job {
    perform(word: string): void {
      ran.push(word);
    }
  }
  const libraryWorker = new Worker({ redis: setup.url, jobs: [LibraryJob], queues: ["library"], concurrency: 2 });
  t.after(() => libraryWorker.stop());
  await libraryWorker.start();
  const client = new Client({ redis: setup.url });
  t.after(() => client.close());
  await client.pushBulk({ class: LibraryJob, queue: "library", args: [["a"], ["b"], ["c"]] });
  await eventually(async () => ran.length === 3, 20_000, `ran ${ran.length}/3`);
  assert.deepEqual([...ran].sort(), ["a", "b", "c"]);
  assert.throws(
    () => new Worker({ redis: setup.url, jobs: [LibraryJob], queues: ["one", "two"] }),
    /a process serves one slot group/,
  );
});

test("tsq-cluster runs one child per slot group; its /metrics reads every group", async (t) => {
  const setup = await theCluster();
  await record.redis.flushdb();
  const port = await freePort();
  const supervisor = startTsq(
    ["-r", JOBS, "-C", configFile(setup), "--metrics-port", String(port), "sup-a", "sup-b"],
    { TSQ_RECORD_URL: record.url, TSQ_LOG_FORMAT: "json", REDIS_URL: "redis://127.0.0.1:1/0" },
    "bin/tsq-cluster.js",
  );
  t.after(() => supervisor.stop(20_000));
  const client = new Client({ redis: setup.url });
  t.after(() => client.close());
  await client.pushBulk({ class: "ClusterRecordJob", queue: "sup-a", args: [[0], [0]] });
  await client.pushBulk({ class: "ClusterRecordJob", queue: "sup-b", args: [[0], [0], [0]] });
  await eventually(
    async () => Number(await record.redis.get("ran:sup-a")) === 2 && Number(await record.redis.get("ran:sup-b")) === 3,
    30_000,
    `the children did not run both groups' jobs\n${supervisor.output().slice(-3000)}`,
  );
  const metrics = await eventually(
    async () => {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
        (response) => response.text(),
        () => "",
      );
      return /^tsq_processes 2$/m.test(text) && /tsq_queue_size\{queue="sup-b"\} 0/.test(text) && text;
    },
    30_000,
    `/metrics did not show both groups\n${supervisor.output().slice(-2000)}`,
    200,
  );
  assert.match(metrics, /tsq_queue_size\{queue="sup-a"\} 0/);
});
