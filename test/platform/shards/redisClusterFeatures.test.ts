/**
 * Features never run on a Redis Cluster before, on one real six-node cluster (3 masters, 3 replicas)
 * whose `default` user needs a password: every tsq process, client and tsqctl here signs in as an ACL
 * user with its own password (docs/redis-connections.md). TLS is not covered here: test/tls/tls.test.ts
 * covers it on one server, and a TLS cluster would be a second cluster to start. Checked with real `tsq`
 * processes: tsq's own cron (leader election and ticks, one of them for another group's queue), a
 * worker's /metrics, kill switches written by tsqctl to every group, a batch and its callback in the
 * batch's group, and a hurried stop (a second TERM while a job runs), where no unblocker exists: the
 * stop lets the waiting fetch time out rather than close its socket, which lost the requeued job.
 */
import { beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "../../../src/client/Client.js";
import { Batch } from "../../../src/index.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { useRedisCluster } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { withinDeadline } from "../../helpers/timing.js";
import { tsqctl } from "../../helpers/tsqctl.js";

const record = useRedis();
const cluster = useRedisCluster();
const JOBS = join(ROOT, "dist/test/jobs/clusterJobs.js");
const BATCH_JOBS = join(ROOT, "dist/test/jobs/batchJobs.js");
const USER = "tsq";
const PASSWORD = "cluster-acl-Pa55-4d2e";
/** The `default` user's password once set: the replicas re-authenticate to their masters with it. */
const ADMIN = "cluster-admin-Pa55-91ab";
const NO_REDIS = { REDIS_URL: "redis://127.0.0.1:1/0" };

/**
 * The ACL user on every node, and `default` no longer open to anyone; once per file, at the first test
 * (file-level hooks would not be ordered after the cluster's own `before`).
 */
const acl = { ready: undefined as Promise<void> | undefined };
function useAcl(): Promise<void> {
  acl.ready ??= (async () => {
    for (const node of cluster.nodes) {
      const admin = cluster.node(node.port);
      await admin.call("ACL", "SETUSER", USER, "on", `>${PASSWORD}`, "~*", "&*", "+@all");
      await admin.call("CONFIG", "SET", "masterauth", ADMIN);
      // Connections signed in already (the helper's probes, the replication links) stay signed in.
      await admin.call("ACL", "SETUSER", "default", "resetpass", `>${ADMIN}`);
    }
  })();
  return acl.ready;
}

beforeEach(() => useAcl());

/** redis+cluster://tsq:<password>@every node[/group]. */
function url(password = PASSWORD, group = ""): string {
  const nodes = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(",");
  return `redis+cluster://${USER}:${password}@${nodes}${group ? `/${group}` : ""}`;
}

function configFile(extra = ""): string {
  const nodes = cluster.nodes.map((node) => `"127.0.0.1:${node.port}"`).join(", ");
  const file = join(scratchDir("tsq-rcluster-features"), "tsq.yml");
  writeFileSync(
    file,
    `redis: { cluster: [${nodes}], username: ${USER}, password: ${PASSWORD} }\n` +
      `heartbeat_interval: 1\naverage_scheduled_poll_interval: 1\nkill_switch_refresh_interval: 0.5\n${extra}`,
  );
  return file;
}

function worker(args: string[], jobs = JOBS, config = configFile()): TsqProcess {
  return startTsq(["-r", jobs, "-C", config, ...args], {
    ...NO_REDIS,
    TSQ_RECORD_URL: record.url,
    TSQ_LOG_FORMAT: "json",
  });
}

/** Reads the cluster as the ACL user (the tests' own connection). */
function raw(t: { after(fn: () => void): void }) {
  const connection = connect(url(), { name: "tsq-test" });
  t.after(() => connection.disconnect());
  return connection;
}

/** A plain connection to node `port` as `default` (signed in), closed after the test. */
function admin(t: { after(fn: () => void): void }, port: number) {
  const connection = connect(`redis://default:${ADMIN}@127.0.0.1:${port}/0`, { name: "tsq-test" });
  t.after(() => connection.disconnect());
  return connection;
}

/** The master serving `group`'s slot, signed in. */
async function masterOf(t: { after(fn: () => void): void }, redis: ReturnType<typeof raw>, group: string) {
  return admin(t, await cluster.masterOf(Number(await redis.call("CLUSTER", "KEYSLOT", `{${group}}`))));
}

test("without the ACL user's password nothing starts; with it, tsq's connections sign in as that user", async (t) => {
  const wrong = startTsq(["-r", JOBS, "-q", "acl", "--redis-url", url("not-the-password")], {
    ...NO_REDIS,
    TSQ_RECORD_URL: record.url,
    TSQ_LOG_FORMAT: "json",
  });
  t.after(() => wrong.stop(5000));
  await wrong.waitForLine((line) => /WRONGPASS/.test(String(line.msg)), 20_000);
  const redis = raw(t);
  assert.equal(await redis.scard("{acl}processes"), 0, "a worker signed in with a wrong password");

  const right = worker(["-q", "acl"]);
  t.after(() => right.stop(10_000));
  await eventually(async () => (await redis.scard("{acl}processes")) === 1, 20_000, `no record\n${right.output()}`);
  // Every master holds the worker's cluster connections, each signed in as the ACL user.
  for (const port of await cluster.masters()) {
    const clients = String(await admin(t, port).call("CLIENT", "LIST")).split("\n");
    assert.ok(
      clients.some((line) => / user=tsq /.test(line)),
      `no connection of user tsq on master ${port}:\n${clients.join("\n")}`,
    );
  }
});

test("cron: one leader among two processes serving default pushes each tick once, also to another group", async (t) => {
  await record.redis.flushdb();
  const cron =
    "cron:\n" +
    '  here: { cron: "* * * * * *", class: ClusterRecordJob, queue: default, args: [0] }\n' +
    '  far: { cron: "* * * * * *", class: ClusterRecordJob, queue: cron-far, args: [0] }\n';
  const config = configFile(`leader_check_interval: 1\n${cron}`);
  const first = worker(["-q", "default"], JOBS, config);
  const second = worker(["-q", "default"], JOBS, config);
  t.after(() => Promise.all([first.stop(10_000), second.stop(10_000)]));
  const redis = raw(t);
  await eventually(async () => Number(await record.redis.get("ran:default")) >= 1, 30_000, first.output());
  const started = performance.now();
  const before = Number(await record.redis.get("ran:default"));
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const ticks = Number(await record.redis.get("ran:default")) - before;
  const seconds = (performance.now() - started) / 1000;
  // One tick a second: two leaders would push about twice as many (fewer is a slow machine, not a bug).
  assert.ok(ticks >= 1 && ticks <= seconds + 1, `${ticks} ticks run in ${seconds.toFixed(1)} s`);
  const leader = await redis.get("{default}dear-leader");
  const identities = await redis.smembers("{default}processes");
  assert.ok(leader !== null && identities.includes(leader), `leader ${leader} is not one of ${identities.join(", ")}`);
  // Nobody serves cron-far: its ticks wait there, each pushed once (distinct cron_at).
  const far = (await redis.lrange("{cron-far}queue:cron-far", 0, -1)).map(
    (payload) => (JSON.parse(payload) as { cron_at: number }).cron_at,
  );
  assert.ok(far.length >= 3, `the other group's ticks were not pushed there: ${far.length}`);
  assert.equal(new Set(far).size, far.length, `a tick was pushed twice: ${far.join(", ")}`);
  assert.equal(Number(await record.redis.get("runs")), await record.redis.scard("done"), "a tick ran twice");
});

test("kill switches: tsqctl drop reaches every group and the worker's /metrics counts the drops", async (t) => {
  await record.redis.flushdb();
  const port = await freePort();
  const proc = worker(["-q", "ks", "--metrics-port", String(port)]);
  t.after(() => proc.stop(10_000));
  const redis = raw(t);
  await eventually(async () => (await redis.sismember("{default}tsq:slot-groups", "ks")) === 1, 20_000, proc.output());
  const env = { ...process.env, ...NO_REDIS };
  const drop = await tsqctl(["drop", "ClusterRecordJob", "--redis-url", url()], env);
  assert.equal(drop.exitCode, 0, drop.stderr);
  for (const group of ["ks", "default"])
    assert.ok(await redis.hexists(`{${group}}tsq:kill-switches`, "ClusterRecordJob"), `no switch in {${group}}`);
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the worker reads switches every 0.5 s
  const client = new Client({ redis: url() });
  t.after(() => client.close());
  await client.pushBulk({ class: "ClusterRecordJob", queue: "ks", args: [[0], [0], [0]] });
  const scrape = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  await eventually(
    async () => /tsq_jobs_dropped_total\{queue="ks",class="ClusterRecordJob"\} 3/.test(await scrape()),
    20_000,
    `the drops were not counted\n${proc.output().slice(-2000)}`,
  );
  assert.equal(await record.redis.get("ran:ks"), null, "a dropped job ran");
  assert.equal(await redis.llen("{ks}queue:ks"), 0);
  const resume = await tsqctl(["resume", "ClusterRecordJob", "--redis-url", url()], env);
  assert.equal(resume.exitCode, 0, resume.stderr);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await client.pushBulk({ class: "ClusterRecordJob", queue: "ks", args: [[0], [0]] });
  await eventually(async () => Number(await record.redis.get("ran:ks")) === 2, 20_000, proc.output());
  const metrics = await scrape();
  assert.match(metrics, /tsq_queue_size\{queue="ks"\} 0/);
  assert.match(metrics, /tsq_jobs_completion_seconds_count\{queue="ks",class="ClusterRecordJob",job_status="done"\} 2/);
});

test("a batch opened in a group runs its members there and fires its callback once", async (t) => {
  const proc = worker(["-q", "bq", "-c", "3"], BATCH_JOBS);
  t.after(() => proc.stop(10_000));
  const client = new Client({ redis: url(PASSWORD, "bq") });
  t.after(() => client.close());
  const batch = new Batch({ client, description: "cluster batch" });
  batch.on("success", "CallbackJob", { where: "bq" }, { queue: "bq" });
  await batch.jobs(async () => {
    for (let i = 0; i < 3; i++) await client.push({ class: "MemberJob", queue: "bq", args: [i] });
  });
  const redis = raw(t);
  await eventually(async () => (await redis.llen("{bq}callbacks")) === 1, 30_000, proc.output().slice(-3000));
  const fired = JSON.parse((await redis.lrange("{bq}callbacks", 0, -1))[0]!) as Record<string, unknown>;
  assert.equal(fired.bid, batch.bid);
  assert.equal(fired.event, "success");
  assert.equal(fired.succeeded, 3);
  assert.deepEqual(fired.options, { where: "bq" });
  const master = await masterOf(t, redis, "bq");
  assert.ok((await master.keys("{bq}tsq:batch:*")).length > 0, "the batch's keys are not in its group");
  // A member or a callback in another group could not update the batch or be heard: refused, at once.
  const member = new Batch({ client });
  await assert.rejects(
    member.jobs(() => client.push({ class: "MemberJob", queue: "elsewhere", args: [0] })),
    /queue elsewhere\) cannot join batch .*shard elsewhere and the batch on shard bq/,
  );
  const callback = new Batch({ client }).on("success", "CallbackJob"); // to queue default, {default}
  await assert.rejects(
    callback.jobs(() => client.push({ class: "MemberJob", queue: "bq", args: [0] })),
    /success callback of batch .* cannot go to queue default: it lives on another shard/,
  );
  assert.equal(await redis.llen("{bq}queue:default"), 0, "a callback was left where no worker reads it");
});

for (const fetch of ["basic", "reliable"] as const) {
  test(`a second TERM while a job runs (${fetch} fetch) stops within the fetch timeout, requeueing it in its group`, async (t) => {
    const queue = `hurry-${fetch}`;
    const client = new Client({ redis: url() });
    t.after(() => client.close());
    const jid = await client.push({ class: "ClusterRecordJob", queue, args: [60_000] });
    // Two lanes: one runs the job, the other waits in a blocking fetch the stop must end.
    const proc = worker(["-q", queue, "-c", "2", "--fetch", fetch, "-t", "25"]);
    const redis = raw(t);
    await eventually(async () => (await redis.llen(`{${queue}}queue:${queue}`)) === 0, 20_000, proc.output());
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    proc.signal("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    proc.signal("SIGTERM");
    const code = await proc.exited;
    const seconds = (performance.now() - started) / 1000;
    assert.equal(code, 0, proc.output().slice(-3000));
    // Not -t's 25 s: the waiting fetch's own timeout (fetch_timeout 2 s, + 1 s) bounds it.
    withinDeadline(seconds * 1000, 3000, `a second TERM on a cluster (${fetch} fetch, -t 25)`);
    // Still there a moment later: no fetch left behind on a closed socket took it back out.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const queued = await redis.lrange(`{${queue}}queue:${queue}`, 0, -1);
    assert.deepEqual(
      queued.map((payload) => (JSON.parse(payload) as { jid: string }).jid),
      [jid],
      proc.output().slice(-3000),
    );
    if (fetch === "reliable")
      assert.deepEqual(await (await masterOf(t, redis, queue)).keys(`{${queue}}queue:sq|*`), [], "private list left");
    console.log(`# hurried stop (${fetch}): exit ${code} after ${seconds.toFixed(2)} s`);
  });
}
