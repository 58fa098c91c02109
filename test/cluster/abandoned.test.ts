/**
 * `tsq-cluster --max-abandoned`: a child whose abandoned jobs (timed out, ignoring their abort signal,
 * their promises still running) reach the limit is stopped gracefully and replaced; a child below it
 * is left alone. Real supervisor and children against a private Redis.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT, eventually } from "../helpers/tsqProcess.js";
import { clusterKit } from "../helpers/clusterKit.js";

const handle = useRedis();
const DURABLE_JOBS = join(ROOT, "dist/test/jobs/durableJobs.js");
const { startCluster, waitForChildren, push } = clusterKit(handle);

test("a child with --max-abandoned 2 abandoned jobs still running is replaced; one abandoned job is not enough", async (t) => {
  const cluster = startCluster(t, ["-r", DURABLE_JOBS, "--processes", "1", "-c", "3", "--max-abandoned", "2"]);
  const pid = cluster.child.pid!;
  const [first] = [...(await waitForChildren(pid, 1, 30_000, cluster)).entries()];
  const [identity, childPid] = first!;

  // One DeafJob: abandoned 1.5 s after it starts (1 s timeout + 0.5 s grace); its promise runs 60 s.
  await push("DeafJob", [["one"]]);
  await eventually(async () => (await handle.redis.hget(identity, "abandoned")) === "1", 20_000, "one abandoned");
  // Below the limit: no replacement is under way (the supervisor checks every heartbeat or so).
  assert.ok(!cluster.lines.some((l) => String(l.msg).includes("abandoned jobs still running")));

  await push("DeafJob", [["two"]]);
  const line = await cluster.waitForLine((l) => String(l.msg).includes("abandoned jobs still running"), 30_000);
  assert.equal(line.pid, childPid, "the line names the child");
  assert.equal(line.abandoned, 2);
  assert.equal(line.limit, 2);
  // The replacement is forked first and the old child stopped gracefully: until it has left, the old
  // one is still the single registered child.
  const after = await eventually(
    async () => {
      const children = await waitForChildren(pid, 1, 30_000, cluster);
      return children.has(identity) ? undefined : children;
    },
    60_000,
    "the old child left and a new one registered",
  );
  assert.ok(!after.has(identity), "the child was replaced by a new process");
  assert.ok(![...after.values()].includes(childPid));
  // Both timed out jobs fail into retry (retry: 1) as JobTimeoutError: nothing is lost by the replacement.
  await eventually(async () => (await handle.redis.zcard("retry")) === 2, 20_000, "both in retry");
  assert.equal(await cluster.stop(), 0);
});
