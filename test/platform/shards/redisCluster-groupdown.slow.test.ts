/**
 * A whole slot group gone (docs/redis-connections.md, "Redis Cluster"): on a real six-node cluster
 * (cluster-require-full-coverage no), the master serving one group's slot and its replica are SIGKILLed
 * while two `tsq` processes work two groups on two different masters. The other group keeps working,
 * and tsqctl answers in bounded time, naming the master that is down, its slots, and the group lost
 * (which its worker recorded in `tsq:slot-groups`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "../../../src/client/Client.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { useRedis } from "../../helpers/redis.js";
import { clusterConfigFile, useRedisCluster } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { tsqctl } from "../../helpers/tsqctl.js";

const record = useRedis();
const cluster = useRedisCluster();
const JOBS = join(ROOT, "dist/test/jobs/clusterJobs.js");

test("a master and its replica SIGKILLed: the other groups keep working, tsqctl names what is down", async (t) => {
  const probe = connect(cluster.url, { name: "tsq-test" });
  t.after(() => probe.disconnect());
  const masterOfGroup = async (group: string) =>
    cluster.masterOf(Number(await probe.call("CLUSTER", "KEYSLOT", `{${group}}`)));
  // Two groups on two masters, neither serving the group `default` (where tsq:slot-groups is kept).
  const registryMaster = await masterOfGroup("default");
  let down = "";
  for (let i = 0; down === ""; i++) if ((await masterOfGroup(`gone-${i}`)) !== registryMaster) down = `gone-${i}`;
  const downMaster = await masterOfGroup(down);
  let up = "";
  for (let i = 0; up === ""; i++) {
    const master = await masterOfGroup(`alive-${i}`);
    if (master !== downMaster && master !== registryMaster) up = `alive-${i}`;
  }

  const client = new Client({ redis: cluster.url });
  t.after(() => client.close());
  await client.pushBulk({ class: "ClusterRecordJob", queue: down, args: Array.from({ length: 100 }, () => [0]) });
  await client.pushBulk({ class: "ClusterRecordJob", queue: up, args: Array.from({ length: 100 }, () => [0]) });

  const file = clusterConfigFile(cluster, "tsq-rcluster-down");
  const env = { TSQ_RECORD_URL: record.url, TSQ_LOG_FORMAT: "json", REDIS_URL: "redis://127.0.0.1:1/0" };
  const downWorker = startTsq(["-r", JOBS, "-C", file, "-q", down, "--fetch", "reliable", "-c", "5"], env);
  const upWorker = startTsq(["-r", JOBS, "-C", file, "-q", up, "--fetch", "reliable", "-c", "5"], env);
  t.after(async () => {
    await Promise.all([downWorker.stop(20_000), upWorker.stop(20_000)]);
  });
  await eventually(async () => (await record.redis.scard("done")) === 200, 60_000, "the first jobs did not run");

  const replica = (await cluster.replicaOf(downMaster))!;
  await cluster.kill(replica, "SIGKILL");
  await cluster.kill(downMaster, "SIGKILL");
  const killedAt = performance.now();

  // The other group goes on: 500 more jobs pushed and run after the loss.
  await client.pushBulk({ class: "ClusterRecordJob", queue: up, args: Array.from({ length: 500 }, () => [0]) });
  await eventually(
    async () => Number(await record.redis.get(`ran:${up}`)) === 600,
    60_000,
    `the live group stopped: ${await record.redis.get(`ran:${up}`)}/600\n${upWorker.output().slice(-3000)}`,
    100,
  );
  const upRecoveredMs = performance.now() - killedAt;

  // tsqctl answers, naming the master that is down and its slots, and the live group's figures. A
  // worker adds its processed count at each heartbeat (1 s here): read until the last one landed.
  let stats = { exitCode: -1, stdout: "", stderr: "" };
  let statsMs = 0;
  const processedUp = () => {
    const figures = JSON.parse(stats.stdout || "{}") as { shards?: Record<string, { processed: number }> };
    return figures.shards?.[up]?.processed ?? 0;
  };
  await eventually(
    async () => {
      const started = performance.now();
      stats = await tsqctl(["stats", "--json", "--redis-url", cluster.url], {
        ...process.env,
        REDIS_URL: "redis://127.0.0.1:1/0",
      });
      statsMs = performance.now() - started;
      return stats.exitCode !== 0 || processedUp() >= 600;
    },
    30_000,
    `tsqctl stats never counted the live group's 600 jobs: ${stats.stdout.slice(0, 500)}`,
  );
  assert.equal(stats.exitCode, 0, stats.stderr);
  // The group lost is named; the dead master too while the client's slot map still lists it.
  assert.match(stats.stderr, new RegExp(`${down}.*its figures are left out`));
  const json = JSON.parse(stats.stdout) as {
    shards: Record<string, { processed: number }>;
    unreachable_shards?: Record<string, string>;
  };
  assert.ok((json.shards[up]?.processed ?? 0) >= 600, stats.stdout);
  assert.equal(json.shards[down], undefined, "a group on the dead master was read");
  // The group is named: its worker recorded it in tsq:slot-groups.
  assert.ok(json.unreachable_shards?.[down] !== undefined, `group ${down} is not named as down: ${stats.stdout}`);
  // A push to the dead group fails within the client's deadline instead of hanging.
  const lost = new Client({ redis: cluster.url, connectTimeout: 5, commandTimeoutMs: 5000 });
  t.after(() => lost.close());
  const pushStarted = performance.now();
  const refused = await lost.push({ class: "ClusterRecordJob", queue: down, args: [0] }).then(
    () => "pushed",
    (error: Error) => error.message,
  );
  const pushMs = performance.now() - pushStarted;
  assert.notEqual(refused, "pushed");
  assert.equal(upWorker.child.exitCode, null, "the live group's worker exited");
  console.log(
    `group down: master ${downMaster} and replica ${replica} SIGKILLed; group ${up} ran its 500 new jobs ` +
      `${Math.round(upRecoveredMs)} ms after the kill; tsqctl stats answered in ${Math.round(statsMs)} ms ` +
      `(stderr: ${stats.stderr.trim()}); a push to group ${down} failed after ${Math.round(pushMs)} ms: ${refused.slice(0, 160)}`,
  );
});
