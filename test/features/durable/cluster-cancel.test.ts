/**
 * cancel(jid) of a durable job running on one child of a real 4-child `tsq-cluster`: the cancel reaches
 * the owning child through its channel and the job's signal aborts within 1 s of the call (the job reads
 * the clock in its abort listener); it is never run again, and the cluster's /metrics counts it cancelled.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { cancel } from "../../../src/features/durable/cancel.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { request } from "../../metrics/http.js";
import { parseExposition, total } from "../../metrics/promText.js";
import { childPids } from "../../reliable/chaosRun.js";
import { withinDeadline } from "../../helpers/timing.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/durableJobs.js");
const CHILDREN = 4;

test("cancel a durable job running on one of 4 children: aborted within 1 s, never re-run, counted", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const port = await freePort();
  const cluster = startTsq(
    ["-r", JOBS, "--processes", String(CHILDREN), "-c", "2", "-t", "5", "--metrics-port", String(port)],
    { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
    "bin/tsq-cluster.js",
  );
  t.after(() => cluster.stop(20_000));
  await eventually(
    async () => (await handle.redis.scard("processes")) === CHILDREN,
    60_000,
    `${CHILDREN} children registered: ${cluster.output().slice(-2000)}`,
    200,
  );

  const jid = (await client.push({ class: "AbortTimedJob", args: ["cc"] }))!;
  const started = await eventually(async () => (await handle.redis.lrange("cc:runs", 0, -1))[0], 20_000, "running");
  const pid = Number(started.replace("started:", ""));
  assert.ok(childPids(cluster.child.pid!).includes(pid), `runs on a child of the cluster (pid ${pid})`);
  // Wait for the heartbeat to show the job in its child's work hash, so the cancel goes to that child.
  const owner = await eventually(
    async () => {
      for (const identity of await handle.redis.smembers("processes"))
        if (Object.values(await handle.redis.hgetall(`${identity}:work`)).some((w) => w.includes(jid))) return identity;
      return undefined;
    },
    10_000,
    "in a work hash",
  );

  const sent = Date.now();
  const result = await cancel(jid, { redis: handle.redis });
  assert.equal(result.runningOn, owner);
  assert.equal(result.notified, 1, "only the owning child is told");
  const abortedAt = Number(await eventually(() => handle.redis.get("cc:aborted_at"), 5000, "aborted"));
  const ms = abortedAt - sent;
  t.diagnostic(`cancel to abort: ${ms} ms`);
  withinDeadline(ms, 1000, "cancel to abort on the owning child");

  // Counted once by the supervisor's /metrics (children report every second).
  await eventually(
    async () => {
      const families = parseExposition((await request(port, "/metrics")).body);
      return total(families, "tsq_jobs_cancelled_total", { class: "AbortTimedJob" }) === 1;
    },
    10_000,
    "tsq_jobs_cancelled_total = 1",
    200,
  );
  // Ended: out of every work hash, and nowhere it could run from again.
  await eventually(
    async () => {
      for (const identity of await handle.redis.smembers("processes"))
        if (Object.values(await handle.redis.hgetall(`${identity}:work`)).some((w) => w.includes(jid))) return false;
      return true;
    },
    10_000,
    "out of the work hashes",
  );
  assert.equal(await handle.redis.llen("queue:default"), 0, "not queued again");
  assert.equal(await handle.redis.zcard("schedule"), 0, "not scheduled");
  assert.equal(await handle.redis.zcard("retry"), 0, "not retried");
  assert.equal(await handle.redis.zcard("dead"), 0, "not dead");
  assert.deepEqual(await handle.redis.lrange("cc:runs", 0, -1), [started], "one execution only");
  assert.ok(Number(await handle.redis.hget(`tsq:durable:${jid}`, "cancelled")) > 0, "the journal is marked");
  // A copy of the jid pushed again (a duplicate, a recovered copy) ends at once, without running.
  await client.push({ class: "AbortTimedJob", args: ["cc"], jid });
  await eventually(
    async () => {
      const families = parseExposition((await request(port, "/metrics")).body);
      return total(families, "tsq_jobs_cancelled_total", { class: "AbortTimedJob" }) === 2;
    },
    10_000,
    "the copy ended as cancelled",
    200,
  );
  assert.deepEqual(await handle.redis.lrange("cc:runs", 0, -1), [started], "the copy did not run");
  assert.equal(await cluster.stop(20_000), 0);
});
