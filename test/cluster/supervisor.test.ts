/**
 * `tsq-cluster` with real processes: draining with 4 children, process groups, TERM and TSTP, a broken
 * job module. Faults (SIGKILL, hangs, kill -9 of the supervisor, USR2) are in supervisor-faults.slow.test.ts.
 *
 * Every cluster is started with a 1 s heartbeat (config file) and `--metrics-port 0`, and is stopped by
 * the test that started it (TERM, then KILL; startTsq's `after` hook is the last resort).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT, TEST_JOBS, eventually, within } from "../helpers/tsqProcess.js";
import { requireRubySidekiq } from "../helpers/ruby.js";
import { BROKEN_JOBS_MESSAGE, BROKEN_START_MESSAGE } from "../jobs/brokenJobsMessage.js";
import { clusterKit } from "../helpers/clusterKit.js";
import { withinDeadline } from "../helpers/timing.js";

const handle = useRedis();
const BROKEN_JOBS = join(ROOT, "dist/test/jobs/brokenJobs.js");
const BROKEN_START_JOBS = join(ROOT, "dist/test/jobs/brokenStartJobs.js");
const { startCluster, runCluster, alive, childPids, waitForChildren, rubyProcessSet, sleep, report, push } =
  clusterKit(handle);

// ---------------------------------------------------------------------------------------------------
// 1. drain

test("--processes 4 drains 50,000 jobs; Ruby ProcessSet and SCARD processes both see exactly 4", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const N = 50_000;
  const pushStart = performance.now();
  await push(
    "CountJob",
    Array.from({ length: N }, (_, i) => [i]),
  );
  report(`pushed ${N} CountJobs in ${((performance.now() - pushStart) / 1000).toFixed(1)} s`);
  assert.equal(await handle.redis.llen("queue:default"), N);

  const start = performance.now();
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "4", "-t", "5"]);
  const pid = cluster.child.pid!;
  const procs = await waitForChildren(pid, 4, 30_000, cluster);
  const allUp = performance.now();

  // Sidekiq's API (6.4.1) and the poller's count (SCARD processes) while the cluster works.
  const ruby = rubyProcessSet();
  assert.equal(ruby.size, 4, JSON.stringify(ruby));
  assert.deepEqual([...ruby.pids].sort(), [...procs.values()].sort(), "Ruby sees the 4 children, by pid");
  assert.deepEqual([...ruby.identities].sort(), [...procs.keys()].sort());
  assert.equal(await handle.redis.scard("processes"), 4);
  assert.ok(!ruby.pids.includes(pid), "the supervisor itself is not a Sidekiq process");

  await eventually(
    async () => (await handle.redis.get("counted")) !== null && Number(await handle.redis.get("counted")) >= N,
    120_000,
    `${N} jobs counted`,
    100,
  );
  const done = performance.now();
  assert.equal(await handle.redis.llen("queue:default"), 0);
  assert.equal(await handle.redis.bitcount("counted:bits"), N, "every index ran at least once");
  assert.equal(Number(await handle.redis.get("counted")), N, "each job ran exactly once");
  // Still 4 after the drain, for both readers.
  assert.equal(await handle.redis.scard("processes"), 4);
  assert.equal(rubyProcessSet().size, 4);
  report(
    `50k drain: children up in ${((allUp - start) / 1000).toFixed(1)} s; drained in ${((done - start) / 1000).toFixed(1)} s from spawn ` +
      `(${Math.round(N / ((done - start) / 1000))} jobs/s), ${((done - allUp) / 1000).toFixed(1)} s after all 4 registered`,
  );
  assert.equal(await cluster.stop(), 0);
  assert.equal(await handle.redis.scard("processes"), 0, "children leave `processes` on a clean stop");
});

// ---------------------------------------------------------------------------------------------------
// 4. process groups

const KNOWN = ["a", "b", "c", "d", "cronjob:x", "cronjob:y"];

test('process groups: --dryrun of "a,b" c "*" (one child per group) and of cronjob, --list-queues', async () => {
  await handle.redis.sadd("queues", ...KNOWN);

  const three = runCluster(["a,b", "c", "*", "-r", TEST_JOBS, "--dryrun"]);
  assert.equal(three.status, 0, three.stderr);
  assert.equal(
    three.stdout,
    [
      'child 0 (group 0 "a,b"): queues a (weight 1), b (weight 1); concurrency 3 (2 queues + 1)',
      'child 1 (group 1 "c"): queues c (weight 1); concurrency 2 (1 queue + 1)',
      // The test jobs name no queue, so `default` is known too.
      'child 2 (group 2 "*"): queues a (weight 1), b (weight 1), c (weight 1), cronjob:x (weight 1), cronjob:y (weight 1), d (weight 1), default (weight 1); concurrency 8 (7 queues + 1)',
      "",
    ].join("\n"),
  );

  const cron = runCluster(["cronjob", "-r", TEST_JOBS, "--dryrun", "-c", "3"]);
  assert.equal(cron.status, 0, cron.stderr);
  assert.equal(
    cron.stdout,
    'child 0 (group 0 "cronjob"): queues cronjob (weight 1), cronjob:x (weight 1), cronjob:y (weight 1); concurrency 3 (fixed)\n',
  );

  const perGroup = runCluster(["a,b,a", "cronjob", "--processes", "2", "--dryrun"]);
  assert.equal(perGroup.status, 0, perGroup.stderr);
  assert.equal(
    perGroup.stdout,
    [
      'child 0 (group 0 "a,b,a"): queues a (weight 2), b (weight 1); concurrency 4 (3 queues + 1)',
      'child 1 (group 0 "a,b,a"): queues a (weight 2), b (weight 1); concurrency 4 (3 queues + 1)',
      'child 2 (group 1 "cronjob"): queues cronjob (weight 1), cronjob:x (weight 1), cronjob:y (weight 1); concurrency 4 (3 queues + 1)',
      'child 3 (group 1 "cronjob"): queues cronjob (weight 1), cronjob:x (weight 1), cronjob:y (weight 1); concurrency 4 (3 queues + 1)',
      "",
    ].join("\n"),
  );

  const list = runCluster(["a,b", "c", "*", "-r", TEST_JOBS, "--list-queues"]);
  assert.equal(list.status, 0, list.stderr);
  assert.equal(list.stdout, "a\nb\n\nc\n\na\nb\nc\ncronjob:x\ncronjob:y\nd\ndefault\n");
  const cronList = runCluster(["cronjob", "--list-queues"]);
  assert.equal(cronList.stdout, "cronjob\ncronjob:x\ncronjob:y\n");

  // Planning only: nothing was started.
  assert.equal(await handle.redis.scard("processes"), 0);
});

test('process groups live: with "a,b" c, jobs on a and b run only in child 0, jobs on c only in child 1, d in neither', async (t) => {
  await handle.redis.sadd("queues", ...KNOWN);
  const cluster = startCluster(t, ["a,b", "c", "-r", TEST_JOBS, "--processes", "1", "-c", "3", "-t", "2"]);
  const pid = cluster.child.pid!;
  const procs = await waitForChildren(pid, 2, 30_000, cluster);
  // A child registers in Redis before its start line has come through the supervisor's output.
  const started = await eventually(
    async () => {
      const lines = cluster.lines.filter((l) => l.msg === "tsq worker started");
      return lines.length === 2 ? lines : undefined;
    },
    10_000,
    "both children's start lines",
  );
  const pidOf = (child: number) => started.find((l) => l.child === child)?.pid as number;
  const [child0, child1] = [pidOf(0), pidOf(1)];
  assert.ok(child0 && child1 && child0 !== child1, JSON.stringify(started));
  assert.equal(started.find((l) => l.child === 0)!.group, "a,b");
  assert.equal(started.find((l) => l.child === 1)!.group, "c");
  // What Sidekiq's UI shows for each child: its queues.
  for (const [identity, p] of procs) {
    const info = JSON.parse((await handle.redis.hget(identity, "info"))!) as { queues: string[] };
    assert.deepEqual(info.queues, p === child0 ? ["a", "b"] : ["c"]);
  }

  const per = 30;
  for (const queue of ["a", "b", "c", "d"])
    await push(
      "RecordJob",
      Array.from({ length: per }, (_, i) => [queue, i]),
      queue,
    );
  await eventually(async () => (await handle.redis.llen("ran")) >= 3 * per, 20_000, "a, b and c jobs ran");
  await sleep(1500);
  const ran = (await handle.redis.lrange("ran", 0, -1)).map((j) => JSON.parse(j) as { pid: number; queue: string });
  assert.equal(ran.length, 3 * per, "nothing else ran (queue d has no group)");
  const byQueue = (q: string) => ran.filter((r) => r.queue === q);
  for (const q of ["a", "b"]) {
    assert.equal(byQueue(q).length, per);
    assert.deepEqual([...new Set(byQueue(q).map((r) => r.pid))], [child0], `queue ${q} only in child 0 (group "a,b")`);
  }
  assert.equal(byQueue("c").length, per);
  assert.deepEqual([...new Set(byQueue("c").map((r) => r.pid))], [child1], 'queue c only in child 1 (group "c")');
  assert.equal(await handle.redis.llen("queue:d"), per, "queue d is in no group: untouched");
  // The job log lines carry the child's index and group as well.
  const doneLines = await eventually(
    async () => {
      const lines = cluster.lines.filter((l) => l.msg === "done" && l.class === "RecordJob");
      return lines.length >= 3 * per ? lines : undefined;
    },
    10_000,
    "every job's done line",
  );
  assert.equal(doneLines.length, 3 * per);
  for (const line of doneLines) {
    assert.equal(line.group, line.queue === "c" ? "c" : "a,b", JSON.stringify(line));
    assert.equal(line.child, line.queue === "c" ? 1 : 0);
  }
  assert.equal(await cluster.stop(), 0);
});

// ---------------------------------------------------------------------------------------------------
// 5. TERM, and TSTP then TERM

test("TERM with 10 long jobs and -t 2: every child stops, the jobs are back in Redis, exit 0 within -t + 5 s", async (t) => {
  const jids = await push(
    "SleepJob",
    Array.from({ length: 10 }, () => [60]),
  );
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "2", "-c", "5", "-t", "2"]);
  const pid = cluster.child.pid!;
  const procs = await waitForChildren(pid, 2, 30_000, cluster);
  await eventually(async () => (await handle.redis.llen("started")) === 10, 15_000, "10 jobs running");
  const kids = childPids(pid);
  assert.equal(kids.length, 2);

  const sent = performance.now();
  cluster.signal("SIGTERM");
  const code = await cluster.exited;
  const seconds = (performance.now() - sent) / 1000;
  report(`TERM -t 2: supervisor exited ${code} after ${seconds.toFixed(2)} s`);
  assert.equal(code, 0, cluster.output().slice(-3000));
  withinDeadline(seconds * 1000, 2000, "TERM -t 2 with 10 running jobs");
  assert.ok(seconds >= 1.5, `the children waited for -t before requeueing: ${seconds} s`);
  for (const kid of kids) assert.ok(!alive(kid), `child ${kid} stopped`);
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((j) => JSON.parse(j).jid as string);
  assert.deepEqual(queued.sort(), [...jids].sort(), "every unfinished job is back in its queue");
  assert.equal(await handle.redis.llen("ran"), 0);
  assert.equal(await handle.redis.scard("processes"), 0);
  for (const identity of procs.keys()) assert.equal(await handle.redis.exists(`${identity}:work`), 0);
});

test("TSTP then TERM, as a deploy does: after TSTP no new job is fetched, running jobs finish, TERM exits 0", async (t) => {
  await push(
    "SleepJob",
    Array.from({ length: 4 }, () => [3]),
  );
  // 3 slots per child, 2 busy: the idle slot's fetch is blocked in BRPOP when TSTP arrives.
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "2", "-c", "3", "-t", "10"]);
  const pid = cluster.child.pid!;
  const procs = await waitForChildren(pid, 2, 30_000, cluster);
  await eventually(async () => (await handle.redis.llen("started")) === 4, 15_000, "4 jobs running");
  cluster.signal("SIGTSTP");
  await eventually(
    async () => {
      for (const identity of procs.keys()) if ((await handle.redis.hget(identity, "quiet")) !== "true") return false;
      return true;
    },
    5000,
    'both children report quiet="true"',
    50,
  );
  const jids = await push(
    "RecordJob",
    Array.from({ length: 5 }, (_, i) => ["after-tstp", i]),
  );
  // The SleepJobs (3 s) finish; nothing new starts.
  await eventually(async () => (await handle.redis.llen("ran")) === 4, 10_000, "running jobs finished after TSTP");
  await sleep(2500);
  const ran = (await handle.redis.lrange("ran", 0, -1)).map((j) => JSON.parse(j) as { args: unknown[] });
  assert.equal(ran.length, 4, `only the 4 SleepJobs ran: ${JSON.stringify(ran)}`);
  assert.equal(await handle.redis.llen("started"), 4);
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((j) => JSON.parse(j).jid as string);
  assert.deepEqual(queued.sort(), [...jids].sort(), "jobs pushed after TSTP wait in the queue");
  assert.equal(childPids(pid).length, 2, "quiet children keep running until TERM");
  assert.equal(await handle.redis.scard("processes"), 2, "and keep heartbeating");

  const sent = performance.now();
  cluster.signal("SIGTERM");
  assert.equal(await cluster.exited, 0, cluster.output().slice(-3000));
  const seconds = (performance.now() - sent) / 1000;
  report(`TSTP then TERM: exit 0 after ${seconds.toFixed(2)} s`);
  // Idle: nothing to wait for, so no deadline of its own (the -t 10 is the slack's size).
  withinDeadline(seconds * 1000, 0, "TERM to idle quiet children");
  assert.equal(await handle.redis.llen("queue:default"), 5);
  assert.equal(await handle.redis.scard("processes"), 0);
});

// ---------------------------------------------------------------------------------------------------
// 6. broken job module

test("every child failing to boot (a startup hook throws): the supervisor exits non-zero in seconds, with the child's error in the log", async (t) => {
  const cluster = startCluster(t, ["-r", BROKEN_START_JOBS, "--processes", "2", "-t", "2"]);
  const pid = cluster.child.pid!;
  const started = performance.now();
  const code = await within(cluster.exited, 60_000, "timeout" as const);
  const seconds = (performance.now() - started) / 1000;
  report(`broken boot: supervisor exited ${code} after ${seconds.toFixed(1)} s`);
  assert.notEqual(code, "timeout", `still running after 60 s:\n${cluster.output().slice(-3000)}`);
  assert.notEqual(code, 0);
  withinDeadline(seconds * 1000, 15_000, "giving up on children that fail to boot");
  const fatal = cluster.lines.find((l) => l.role === "supervisor" && l.level === 60);
  assert.ok(fatal, `a fatal supervisor line:\n${cluster.output().slice(-3000)}`);
  assert.ok(
    String(fatal.msg).includes(BROKEN_START_MESSAGE),
    `the child's error is in the supervisor's line: ${String(fatal.msg)}`,
  );
  const forks = cluster.lines.filter((l) => l.role === "supervisor" && l.msg === "child exited unexpectedly").length;
  assert.ok(forks <= 6, `did not fork forever: ${forks} child exits`);
  assert.deepEqual(childPids(pid), []);
  assert.equal(await handle.redis.scard("processes"), 0);
});

test("a job module that throws on load: the supervisor exits 2 before forking, with the module's error", () => {
  // The supervisor imports the module first (its `plugins` export, and with groups its queues).
  for (const args of [["--processes", "2"], ["a,b", "--dryrun"], ["a,b"]]) {
    const run = runCluster(["-r", BROKEN_JOBS, ...args, "--metrics-port", "0"]);
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    assert.ok(run.stderr.includes(BROKEN_JOBS_MESSAGE), run.stderr);
    assert.doesNotMatch(run.stdout + run.stderr, /"child":/, "no child was forked");
  }
});
