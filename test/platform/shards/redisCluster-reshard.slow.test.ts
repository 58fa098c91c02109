/**
 * Slots moved under load (docs/redis-connections.md, "Redis Cluster"): on a real six-node cluster,
 * `redis-cli --cluster reshard` moves every slot of the master serving one group, that group's slot among
 * them, to another master while a `tsq` process with reliable fetch works a 10,000-job run in the group
 * and a pusher adds jobs to it. Commands meet MOVED, ASK and TRYAGAIN while the group's keys migrate;
 * nothing acknowledged may be lost, and nothing may run twice beyond reliable fetch's at-least-once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "../../../src/client/Client.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { useRedis } from "../../helpers/redis.js";
import { clusterConfigFile, pushRecordJobs, startPusher, useRedisCluster } from "../../helpers/redisCluster.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";

const JOBS = 10_000;
/** ms each job sleeps: 20 slots × 2 ms keeps the run going through the reshard. */
const JOB_MS = 2;
const QUEUE = "moving";

const record = useRedis();
const cluster = useRedisCluster();

test("redis-cli --cluster reshard moves a group's slot under a reliable-fetch run: nothing lost", async (t) => {
  const client = new Client({ redis: cluster.url });
  t.after(() => client.close());
  await pushRecordJobs(client, QUEUE, JOBS, JOB_MS);
  const probe = connect(cluster.url, { name: "tsq-test" });
  t.after(() => probe.disconnect());
  const slot = Number(await probe.call("CLUSTER", "KEYSLOT", `{${QUEUE}}`));
  const source = await cluster.masterOf(slot);
  const target = (await cluster.masters()).find((port) => port !== source)!;
  const sourceSlots = 5461; // redis-cli --cluster create gives each of 3 masters a third: at most 5462

  const file = clusterConfigFile(cluster, "tsq-rcluster-reshard");
  const worker = startTsq(
    ["-r", join(ROOT, "dist/test/jobs/clusterJobs.js"), "-C", file, "-q", QUEUE, "--fetch", "reliable", "-c", "20"],
    { TSQ_RECORD_URL: record.url, TSQ_LOG_FORMAT: "json", REDIS_URL: "redis://127.0.0.1:1/0" },
  );
  t.after(() => worker.stop(15_000));
  const done = () => record.redis.scard("done");
  await eventually(async () => (await done()) >= 2000, 60_000, `jobs did not start:\n${worker.output().slice(-2000)}`);

  const pusher = startPusher(cluster.url, QUEUE, 5);
  t.after(() => pusher.stop()); // a failed assertion below must not leave it running

  const doneAtStart = await done();
  const started = performance.now();
  const reshard = await cluster.cli([
    "reshard",
    `127.0.0.1:${source}`,
    "--cluster-from",
    await cluster.nodeId(source),
    "--cluster-to",
    await cluster.nodeId(target),
    "--cluster-slots",
    String(sourceSlots + 1),
    "--cluster-yes",
  ]);
  const reshardMs = performance.now() - started;
  assert.equal(reshard.code, 0, reshard.out.slice(-2000));
  assert.equal(await cluster.masterOf(slot), target, "the group's slot did not move");
  const doneAtEnd = await done();
  await pusher.stop();
  const { acknowledged } = pusher;

  const left = async (): Promise<number> => {
    const node = cluster.node(target);
    let count = await node.llen(`{${QUEUE}}queue:${QUEUE}`);
    for (const key of await node.keys(`{${QUEUE}}queue:sq|*`)) count += await node.llen(key);
    return count;
  };
  await eventually(
    async () => (await left()) === 0 && (await done()) >= JOBS + acknowledged.length,
    120_000,
    `jobs are left: ${await left()} in Redis, ${await done()} done of ${JOBS + acknowledged.length}\n${worker.output().slice(-3000)}`,
    200,
  );
  const doneJids = new Set(await record.redis.smembers("done"));
  const runs = Number(await record.redis.get("runs"));
  const lost = acknowledged.filter((jid) => !doneJids.has(jid)).length + (JOBS + acknowledged.length - doneJids.size);
  assert.equal(doneJids.size, JOBS + acknowledged.length, "a job was lost");
  assert.equal(worker.child.exitCode, null, "the worker exited");
  const errors = worker.lines.filter((line) => Number(line.level) >= 50).length;
  console.log(
    `reshard: ${sourceSlots + 1} slots moved from ${source} to ${target} in ${Math.round(reshardMs)} ms ` +
      `while ${doneAtEnd - doneAtStart} jobs ran; pushed ${JOBS} before + ${acknowledged.length} during ` +
      `(${pusher.failed()} refused); run ${doneJids.size} distinct, lost ${lost}, run twice ${runs - doneJids.size}; ` +
      `error log lines ${errors}`,
  );
  // A run twice is reliable fetch's at-least-once (an ack refused mid-migration requeues its job): printed.
  assert.equal(await worker.stop(15_000), 0);
});
