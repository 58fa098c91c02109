/**
 * A `tsq-cluster` child SIGKILLed on a Redis Cluster: the supervisor recovers the dead child's private
 * lists in its slot group (reliable fetch) and restarts it; every job runs, those in flight in the
 * killed child twice (reliable fetch's at-least-once), none is lost.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";
import { clusterConfigFile, useRedisCluster } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";

const JOBS = 400;
const QUEUE = "child-kill";
const record = useRedis();
const cluster = useRedisCluster();

test("a tsq-cluster child SIGKILLed on a cluster: its jobs are recovered in its group, none lost", async (t) => {
  const client = new Client({ redis: cluster.url });
  t.after(() => client.close());
  await client.pushBulk({ class: "ClusterRecordJob", queue: QUEUE, args: Array.from({ length: JOBS }, () => [100]) });
  const file = clusterConfigFile(cluster, "tsq-rcluster-child");
  const supervisor = startTsq(
    ["-r", join(ROOT, "dist/test/jobs/clusterJobs.js"), "-C", file, "--fetch", "reliable", "-c", "10", QUEUE],
    { TSQ_RECORD_URL: record.url, TSQ_LOG_FORMAT: "json", REDIS_URL: "redis://127.0.0.1:1/0" },
    "bin/tsq-cluster.js",
  );
  t.after(() => supervisor.stop(20_000));
  const done = () => record.redis.scard("done");
  await eventually(async () => (await done()) >= 50, 60_000, `no work:\n${supervisor.output().slice(-2000)}`);
  const started = await supervisor.waitForLine((line) => line.msg === "tsq worker started");
  const victim = Number(started.pid);
  assert.notEqual(victim, supervisor.child.pid);
  const doneAtKill = await done();
  process.kill(victim, "SIGKILL");
  await eventually(
    async () => (await done()) === JOBS,
    120_000,
    `not every job ran: ${await done()}/${JOBS}\n${supervisor.output().slice(-3000)}`,
    200,
  );
  const runs = Number(await record.redis.get("runs"));
  const raw = cluster.node(
    await cluster.masterOf(Number(await cluster.node(cluster.nodes[0]!.port).call("CLUSTER", "KEYSLOT", `{${QUEUE}}`))),
  );
  await eventually(
    async () => (await raw.keys(`{${QUEUE}}queue:sq|*`)).length <= 1,
    30_000,
    "the dead child's private list was left behind",
  );
  console.log(
    `cluster child SIGKILL: ${JOBS} jobs, ${doneAtKill} done at the kill; run ${await done()} distinct, lost 0, ` +
      `recorded twice ${runs - JOBS} (jobs in flight in the killed child died before recording, and ran again after the supervisor recovered them)`,
  );
  assert.ok(runs - JOBS <= 20, `more jobs ran twice than the killed child could hold: ${runs - JOBS}`);
});
