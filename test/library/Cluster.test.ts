/**
 * Clusters started from code, in this test process (the node:cluster primary), with real children
 * against a private redis-server: jobs run on every child, stop() leaves no child process, a second
 * cluster in the same process is refused, a SIGKILLed child is replaced, bad settings are named.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import nodeCluster from "node:cluster";
import { pathToFileURL } from "node:url";
import { useRedis } from "../helpers/redis.js";
import { alive } from "../helpers/clusterKit.js";
import { TEST_JOBS, eventually } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";
import { Cluster, type ClusterConfig, type ChildExitInfo } from "../../src/library/Cluster.js";
import { ArgumentError } from "../../src/wire/errors.js";
import { RecordJob } from "../jobs/testJobs.js";

const handle = useRedis();

/** Two children of one job slot each, a 1 s heartbeat so they report ready fast. */
function config(extra: Partial<ClusterConfig> = {}): ClusterConfig {
  return {
    redis: handle.url,
    require: TEST_JOBS,
    processes: 2,
    concurrency: 1,
    timeout: 5,
    options: { heartbeatInterval: 1 },
    ...extra,
  };
}

/** A cluster stopped after the test whatever happens (stop() is idempotent). */
function cluster(t: TestContext, extra: Partial<ClusterConfig> = {}): Cluster {
  const made = new Cluster(config(extra));
  t.after(() => made.stop({ timeout: 1 }));
  return made;
}

function pidsOf(c: Cluster): number[] {
  return c
    .children()
    .map((child) => child.pid!)
    .sort((a, b) => a - b);
}

async function ran(): Promise<{ jid: string; pid: number }[]> {
  return (await handle.redis.lrange("ran", 0, -1)).map((line) => JSON.parse(line) as { jid: string; pid: number });
}

test("two children from code run every job; stop() leaves no child process and no listener", async (t) => {
  const exitListeners = nodeCluster.listenerCount("exit");
  const c = cluster(t);
  const events: string[] = [];
  const exits: ChildExitInfo[] = [];
  c.on("started", () => events.push("started"));
  c.on("stopped", () => events.push("stopped"));
  c.on("child:exit", (info) => exits.push(info));

  await c.start();
  assert.deepEqual(events, ["started"]);
  const children = c.children();
  assert.equal(children.length, 2);
  assert.ok(children.every((child) => child.ready && child.identity !== undefined));
  const pids = pidsOf(c);
  assert.ok(pids.every(alive));
  assert.equal(await handle.redis.scard("processes"), 2);

  // Each child has one slot and each job takes 200 ms, so one child cannot take them all.
  const jids = await pushJobs(
    handle.url,
    "SleepJob",
    Array.from({ length: 10 }, () => [0.2]),
  );
  const done = await eventually(async () => ((await ran()).length === 10 ? ran() : undefined), 30_000, "10 jobs ran");
  assert.deepEqual(done.map((r) => r.jid).sort(), [...jids].sort());
  assert.deepEqual(
    [...new Set(done.map((r) => r.pid))].sort((a, b) => a - b),
    pids,
    "both children served jobs",
  );

  await c.stop({ timeout: 5 });
  assert.deepEqual(events, ["started", "stopped"]);
  assert.deepEqual(pids.filter(alive), [], "no child process is left once stop() resolved");
  assert.deepEqual(
    exits.map((e) => [e.pid, e.code]).sort(),
    pids.map((pid) => [pid, 0]),
  );
  assert.equal(await handle.redis.scard("processes"), 0);
  assert.equal(await c.finished, 0);
  assert.equal(nodeCluster.listenerCount("exit"), exitListeners);
  await c.stop(); // idempotent
});

test("a second cluster in the same process is refused with the reason; the first runs on", async (t) => {
  const first = cluster(t, { processes: 1 });
  const second = cluster(t, { processes: 1 });
  // Both start at once: the second is refused when it comes to fork, after planning.
  const [a, b] = await Promise.allSettled([first.start(), second.start()]);
  assert.equal(a.status, "fulfilled");
  assert.equal(b.status, "rejected");
  assert.match(String(b.reason), /only one cluster may run at a time/);

  // Started later, it is refused before it connects to anything.
  const third = cluster(t, { processes: 1 });
  await assert.rejects(third.start(), /another cluster is already running in this process.*only one cluster/);
  await third.stop();

  assert.equal(first.children().length, 1);
  await pushJobs(handle.url, "RecordJob", [["still here"]]);
  await eventually(async () => (await ran()).length === 1, 20_000, "the first cluster ran the job");
  const [pid] = pidsOf(first);
  await first.stop();
  assert.equal(alive(pid!), false);

  // Once the first has stopped, a new cluster may start.
  const fourth = cluster(t, { processes: 1 });
  await fourth.start();
  await fourth.stop();
});

test("a SIGKILLed child is restarted: child:exit and child:restart, then a new child serves", async (t) => {
  const c = cluster(t);
  await c.start();
  const [victim, survivor] = pidsOf(c) as [number, number];
  const restarted = new Promise<{ group: string; reason: string }>((resolve) => c.once("child:restart", resolve));
  const exited = new Promise<ChildExitInfo>((resolve) => c.once("child:exit", resolve));
  process.kill(victim, "SIGKILL");

  assert.equal((await exited).signal, "SIGKILL");
  assert.equal((await restarted).reason, "crash");
  const replaced = await eventually(
    async () => {
      const children = c.children();
      return children.length === 2 && children.every((child) => child.ready) ? pidsOf(c) : undefined;
    },
    30_000,
    "the replacement child is ready",
  );
  assert.ok(replaced.includes(survivor));
  assert.ok(!replaced.includes(victim));
  assert.equal(alive(victim), false);
  // The dead child's record is pruned at once: only the two live children are registered.
  await eventually(async () => (await handle.redis.scard("processes")) === 2, 10_000, "two processes registered");

  await c.stop({ timeout: 2 });
  assert.deepEqual(replaced.filter(alive), []);
});

test("bad settings are named before anything starts", () => {
  const bad = (extra: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => new Cluster({ ...config(), ...extra }),
      (error: unknown) => error instanceof ArgumentError && message.test(error.message),
    );
  bad(
    { proceses: 2 },
    /unknown setting `proceses` \(did you mean `processes`\?\); the settings are redis, .*processes/,
  );
  bad({ jobs: [RecordJob] }, /`jobs` is not a Cluster setting: children are separate processes.*`require`/);
  bad({ plugins: [] }, /`plugins` is not a Cluster setting: .*export const plugins = \[\.\.\.builtinPlugins\(\)/);
  bad(
    { require: [RecordJob] },
    /`require` must be the job module's path .* not classes: children are separate processes/,
  );
  bad({ require: RecordJob }, /not classes/);
  bad({ require: undefined }, /`require` is missing/);
  bad({ require: "/nonexistent/jobs.js" }, /no job module at \/nonexistent\/jobs\.js/);
  bad({ processes: 0 }, /`processes` must be an integer from 1 to 1024 \(children per group\), got 0/);
  bad({ processes: NaN }, /got NaN/);
  bad({ hangThreshold: -1 }, /`hangThreshold` must be a number of seconds above 0/);
  bad({ metricsPort: 70_000 }, /`metricsPort` must be a TCP port from 0 to 65535/);
  bad({ concurrency: 0 }, /Cluster: `concurrency` must be an integer from 1 to 10000/);
  bad({ negate: true }, /`negate` needs `groups`/);
  bad({ groups: ["a"], queues: ["b"] }, /give `groups` or `queues`, not both/);
  bad({ groups: ["a,,b"] }, /Cluster: groups\[0\]:/);
  // A file: URL is a path too.
  assert.equal(new Cluster({ ...config(), require: pathToFileURL(TEST_JOBS) }).plan.length, 0);
});
