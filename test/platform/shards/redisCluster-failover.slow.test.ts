/**
 * A Redis Cluster master SIGKILLed under load (docs/redis-connections.md, "Redis Cluster"): a real
 * six-node cluster on loopback; a `tsq` process with reliable fetch works a 20,000-job run in one slot
 * group while the master serving that group's slot is killed. Its replica is promoted (cluster-node-
 * timeout 2 s), the worker follows without a restart, and no job pushed before the kill is lost.
 *
 * Replication is asynchronous: a write the killed master acknowledged but had not yet sent to its
 * replica is gone. The 20,000 jobs are therefore pushed and replicated (WAIT) before the kill; fetches,
 * acks and requeues during it are what this test puts at risk (a lost ack runs a job again: counted as
 * run twice). Jobs pushed during the kill are counted apart: those acknowledged and lost are what async
 * replication loses, printed, not asserted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { useRedis } from "../../helpers/redis.js";
import { clusterConfigFile, pushRecordJobs, startPusher, useRedisCluster } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";

const JOBS = 20_000;
/** ms each job sleeps: 20 slots × 2 ms keeps the run several seconds long, long enough to kill mid-run. */
const JOB_MS = 2;
/** ms between pushes of the pusher that runs through the kill. */
const PUSH_EVERY_MS = 5;
const QUEUE = "failover";

const record = useRedis();
const cluster = useRedisCluster();

test("a master SIGKILLed under a 20,000-job reliable-fetch run: replica promoted, nothing lost, no restart", async (t) => {
  const client = new Client({ redis: cluster.url });
  t.after(() => client.close());
  await pushRecordJobs(client, QUEUE, JOBS, JOB_MS);
  const probe = connect(cluster.url, { name: "tsq-test" });
  t.after(() => probe.disconnect());
  const slot = Number(await probe.call("CLUSTER", "KEYSLOT", `{${QUEUE}}`));
  const masterPort = await cluster.masterOf(slot);
  const replicaPort = (await cluster.replicaOf(masterPort))!;
  const master = cluster.node(masterPort);
  assert.equal(await master.llen(`{${QUEUE}}queue:${QUEUE}`), JOBS);
  // Test setup only: the run starts from jobs the replica has, so the kill cannot lose these pushes.
  assert.equal(Number(await master.call("WAIT", "1", "10000")), 1, "the replica did not acknowledge the jobs");

  const file = clusterConfigFile(cluster, "tsq-rcluster-failover");
  const worker = startTsq(
    ["-r", join(ROOT, "dist/test/jobs/clusterJobs.js"), "-C", file, "-q", QUEUE, "--fetch", "reliable", "-c", "20"],
    {
      TSQ_RECORD_URL: record.url,
      TSQ_LOG_FORMAT: "json",
      REDIS_URL: "redis://127.0.0.1:1/0",
    },
  );
  t.after(() => worker.stop(15_000));
  const pid = worker.child.pid;
  const done = () => record.redis.scard("done");
  await eventually(async () => (await done()) >= 3000, 60_000, `jobs did not start:\n${worker.output().slice(-2000)}`);

  // A pusher through the kill: each acknowledged push is remembered.
  const pusher = startPusher(cluster.url, QUEUE, PUSH_EVERY_MS);
  t.after(() => pusher.stop()); // a failed assertion below must not leave it running

  const replica = cluster.node(replicaPort);
  const doneAtKill = await done();
  const killedAt = Date.now();
  await cluster.kill(masterPort, "SIGKILL");
  const promoted = await eventually(
    async () => {
      const role = (await replica.call("ROLE").catch(() => [""])) as unknown[];
      return (
        role[0] === "master" && { at: Date.now(), probe: Number((await replica.get(`{${QUEUE}}probe:completed`)) ?? 0) }
      );
    },
    30_000,
    "the replica was not promoted",
    20,
  );
  // Seen by the workers: from the kill to the first job completed against the promoted master.
  await eventually(
    async () => Number((await replica.get(`{${QUEUE}}probe:completed`)) ?? 0) > promoted.probe,
    60_000,
    `no job completed on the promoted master:\n${worker.output().slice(-3000)}`,
    20,
  );
  const recoveryMs = Date.now() - killedAt;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await pusher.stop();
  const { acknowledged } = pusher;

  // Every job pushed before the kill ran; and every acknowledged push that survived the failover too.
  const survivors = async (): Promise<number> => {
    let left = await replica.llen(`{${QUEUE}}queue:${QUEUE}`);
    for (const key of await replica.keys(`{${QUEUE}}queue:sq|*`)) left += await replica.llen(key);
    return left;
  };
  await eventually(
    async () => (await survivors()) === 0 && (await done()) >= JOBS,
    120_000,
    `jobs are left: ${await survivors()} in Redis, ${await done()} done\n${worker.output().slice(-3000)}`,
    200,
  );
  const doneJids = new Set(await record.redis.smembers("done"));
  const runs = Number(await record.redis.get("runs"));
  const ranPushedDuring = acknowledged.filter((jid) => doneJids.has(jid)).length;
  const lostPushedDuring = acknowledged.length - ranPushedDuring;
  const ranBefore = doneJids.size - ranPushedDuring;
  assert.equal(ranBefore, JOBS, "a job pushed and replicated before the kill was lost");
  assert.equal(worker.child.exitCode, null, "the worker exited");
  assert.equal(worker.child.pid, pid);
  assert.equal(await replica.zcard(`{${QUEUE}}dead`), 0);
  console.log(
    `cluster failover: ${JOBS} jobs pushed before the kill (replicated), ${doneAtKill} done at the kill; ` +
      `promoted after ${promoted.at - killedAt} ms; first job completed on the promoted master ${recoveryMs} ms after the kill; ` +
      `run ${doneJids.size} distinct, lost 0 of those pushed before; run twice ${runs - doneJids.size}; ` +
      `pushed during the run ${acknowledged.length} acknowledged (${pusher.failed()} refused), ` +
      `${lostPushedDuring} acknowledged then lost with the master (async replication)`,
  );
  assert.equal(await worker.stop(15_000), 0);
});
