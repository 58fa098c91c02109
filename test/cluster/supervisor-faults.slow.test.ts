/**
 * `tsq-cluster` faults with real processes: a child SIGKILLed during work, hung children, kill -9 of the
 * supervisor, a USR2 rolling restart under load.
 *
 * Every cluster is started with a 1 s heartbeat (config file) and `--metrics-port 0`, and is stopped by
 * the test that started it (TERM, then KILL; startTsq's `after` hook is the last resort).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually } from "../helpers/tsqProcess.js";
import { clusterKit } from "../helpers/clusterKit.js";
import { limitFor, withinDeadline } from "../helpers/timing.js";

const handle = useRedis();
const { startCluster, alive, childPids, registered, waitForChildren, sleep, report, push } = clusterKit(handle);

// ---------------------------------------------------------------------------------------------------
// 2. SIGKILL one child

test("SIGKILL one child during work: the supervisor restarts it after its 1 s back-off, prunes the dead identity, the rest completes", async (t) => {
  const N = 6000;
  const CONCURRENCY = 10;
  await push(
    "NapCountJob",
    Array.from({ length: N }, (_, i) => [i, 20]),
  );
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "4", "-c", String(CONCURRENCY), "-t", "5"]);
  const pid = cluster.child.pid!;
  const before = await waitForChildren(pid, 4, 90_000, cluster);
  await eventually(async () => Number(await handle.redis.get("counted")) >= 500, 60_000, "work under way", 100);

  const [victimIdentity, victimPid] = [...before.entries()][1]!;
  process.kill(victimPid, "SIGKILL");
  const killedAt = performance.now();
  // Each outcome is awaited as an event with a deadline far above its expected time (a restart after
  // the 1 s back-off, a boot of about a second, a prune within milliseconds), so a loaded machine slows
  // the test down without failing it; the times are reported, not asserted.
  const knownPids = new Set(before.values());
  const forkedMs = await eventually(
    async () => childPids(pid).some((p) => !knownPids.has(p) && alive(p)) && performance.now() - killedAt,
    30_000,
    `a replacement process forked\n${cluster.output().slice(-3000)}`,
    25,
  );
  const prunedMs = await eventually(
    async () => !(await registered()).has(victimIdentity) && performance.now() - killedAt,
    30_000,
    "the dead identity pruned from processes",
    25,
  );
  const [replacement, replacedMs] = await eventually(
    async () => {
      const fresh = [...(await registered()).entries()].find(([id, p]) => !before.has(id) && alive(p));
      return fresh && ([fresh[0], performance.now() - killedAt] as const);
    },
    60_000,
    `the replacement registered in processes\n${cluster.output().slice(-3000)}`,
    25,
  );
  report(
    `SIGKILL child: replacement process running after ${forkedMs.toFixed(0)} ms, registered in Redis after ${replacedMs.toFixed(0)} ms, dead identity pruned after ${prunedMs.toFixed(0)} ms`,
  );
  assert.equal(await handle.redis.exists(`${victimIdentity}:work`), 0, "the dead child's work hash is gone");
  assert.ok(!alive(victimPid));
  const crash = await cluster.waitForLine(
    (l) => l.role === "supervisor" && l.msg === "child exited unexpectedly",
    30_000,
  );
  assert.equal(crash.signal, "SIGKILL");
  const restart = await cluster.waitForLine((l) => l.role === "supervisor" && l.msg === "restarting child", 30_000);
  // The supervisor's own decision, independent of machine load: the first restart waits the 1 s back-off.
  assert.equal(restart.delay_ms, 1000);
  assert.equal(restart.child, crash.child);
  const booted = cluster.lines.find((l) => l.msg === "tsq worker started" && l.identity === replacement);
  if (booted) {
    const bootMs = (booted.time as number) - (restart.time as number) - (restart.delay_ms as number);
    report(
      `SIGKILL child: restart back-off ${String(restart.delay_ms)} ms, then the replacement booted in ~${bootMs} ms (fork to "tsq worker started")`,
    );
  }

  // The cluster is back to 4 and drains the queue. BasicFetch (like Sidekiq's) loses what the killed
  // child had in flight, at most its concurrency; every other job runs.
  const after = await waitForChildren(pid, 4, 30_000, cluster);
  assert.ok(after.has(replacement));
  await eventually(async () => (await handle.redis.llen("queue:default")) === 0, 60_000, "queue drained");
  await eventually(
    async () => {
      const bits = await handle.redis.bitcount("counted:bits");
      return bits >= N - CONCURRENCY && Number(await handle.redis.get("counted")) === bits ? bits : undefined;
    },
    10_000,
    "all jobs except the killed child's in-flight ones ran",
  );
  const ran = await handle.redis.bitcount("counted:bits");
  report(`SIGKILL child: ${ran}/${N} jobs ran; ${N - ran} were in flight in the killed child (BasicFetch loses them)`);
  assert.equal(await cluster.stop(), 0);
});

// ---------------------------------------------------------------------------------------------------
// 3. hung child

/**
 * Pushes a CpuSpinJob(120 s, warmupMs) into a 2-child cluster with a 1 s heartbeat and
 * `--hang-threshold 5`, and checks that its child is detected as hung, killed and replaced, and that
 * the supervisor's hang line names the job (class and jid).
 */
async function hangTest(t: TestContext, warmupMs: number, label: string): Promise<void> {
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "2", "-c", "2", "-t", "2", "--hang-threshold", "5"]);
  const pid = cluster.child.pid!;
  const before = await waitForChildren(pid, 2, 30_000, cluster);
  const [jid] = await push("CpuSpinJob", [[120, warmupMs]]);
  const spin = await eventually(
    async () => (await handle.redis.lindex("spinning", 0)) ?? undefined,
    15_000,
    "spin started",
    20,
  );
  const spinStarted = performance.now();
  const spinPid = (JSON.parse(spin) as { pid: number }).pid;
  const spinIdentity = [...before.entries()].find(([, p]) => p === spinPid)?.[0];
  assert.ok(spinIdentity, "the spinning job runs in a registered child");

  const hung = await cluster.waitForLine(
    (l) => l.role === "supervisor" && typeof l.msg === "string" && l.msg.includes("hung"),
    30_000,
  );
  const detectedS = (performance.now() - spinStarted) / 1000;
  report(
    `hang (${label}): detected ${detectedS.toFixed(1)} s after the job started spinning (threshold 5 s); line: ${String(hung.msg)}`,
  );
  assert.ok(detectedS >= 4, `not before the threshold: ${detectedS} s`);
  assert.ok(detectedS < 15, `detected within threshold + a few checks: ${detectedS} s`);
  assert.equal(hung.pid, spinPid, "the line names the hung child's pid");
  assert.equal(hung.identity, spinIdentity);

  // Killed and replaced: a new identity, the old one pruned, 2 children again.
  await eventually(async () => !alive(spinPid), 5000, "the hung child is killed");
  const after = await waitForChildren(pid, 2, 10_000, cluster);
  assert.ok(!after.has(spinIdentity), "the hung identity is gone");
  assert.ok([...after.values()].every((p) => p !== spinPid));
  assert.equal(after.size, 2);
  report(
    `hang (${label}): replacement registered ${((performance.now() - spinStarted) / 1000).toFixed(1)} s after the spin started`,
  );
  assert.equal(await cluster.stop(), 0);

  // Last, so a missing job name does not hide the results above.
  const msg = hung.msg as string;
  const jobs = (hung.jobs ?? []) as { class?: string; jid?: string }[];
  assert.ok(msg.includes(`CpuSpinJob ${jid}`), `the hang line names the job (class and jid ${jid}): ${msg}`);
  assert.ok(
    jobs.some((j) => j.class === "CpuSpinJob" && j.jid === jid),
    JSON.stringify(jobs),
  );
}

test("a job that runs 1.5 s, then spins the CPU for 120 s: its child is detected as hung (threshold 5 s) and replaced; the log names the job", async (t) => {
  await hangTest(t, 1500, "spin after 1.5 s");
});

test("a job that spins the CPU for 120 s from its first instruction: its child is detected as hung and replaced; the log names the job", async (t) => {
  await hangTest(t, 0, "immediate spin");
});

// ---------------------------------------------------------------------------------------------------
// 7. kill -9 of the supervisor

test("kill -9 of the supervisor: every child is gone within -t + 5 s and their jobs are back in the queue", async (t) => {
  const jids = await push(
    "SleepJob",
    Array.from({ length: 10 }, () => [60]),
  );
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", "2", "-c", "5", "-t", "2"]);
  const pid = cluster.child.pid!;
  await waitForChildren(pid, 2, 30_000, cluster);
  await eventually(async () => (await handle.redis.llen("started")) === 10, 15_000, "10 jobs running");
  const kids = childPids(pid);
  assert.equal(kids.length, 2);

  process.kill(pid, "SIGKILL");
  const killed = performance.now();
  await cluster.exited;
  let goneMs: number;
  try {
    await eventually(async () => kids.every((k) => !alive(k)), limitFor(2000 + 5000), "orphaned children exit", 50);
    goneMs = performance.now() - killed;
  } finally {
    for (const k of kids) if (alive(k)) process.kill(k, "SIGKILL");
  }
  report(`kill -9 supervisor: all children gone after ${goneMs.toFixed(0)} ms`);
  withinDeadline(goneMs, 7000, "orphaned children exit after -t 2 + 5 s");
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((j) => JSON.parse(j).jid as string);
  assert.deepEqual(queued.sort(), [...jids].sort(), "the orphans requeued their running jobs");
  assert.equal(await handle.redis.llen("ran"), 0);
  assert.equal(await handle.redis.scard("processes"), 0, "the orphans left `processes`");
});

// ---------------------------------------------------------------------------------------------------
// 8. USR2 rolling restart under load

test("USR2 under load: every child is replaced, no job is lost, throughput never drops to zero", async (t) => {
  const N = 12_000;
  /** Jobs pushed whenever fewer are queued during the roll (40 slots of 50 ms jobs: 2.5 s of work at least). */
  const TOP_UP = 2_000;
  const CHILDREN = 4;
  await push(
    "NapCountJob",
    Array.from({ length: N }, (_, i) => [i, 50]),
  );
  const cluster = startCluster(t, ["-r", TEST_JOBS, "--processes", String(CHILDREN), "-c", "10", "-t", "10"]);
  const pid = cluster.child.pid!;
  const before = await waitForChildren(pid, CHILDREN, 30_000, cluster);
  await eventually(async () => Number(await handle.redis.get("counted")) >= 500, 30_000, "work under way");

  interface Sample {
    at: number;
    counted: number;
    queued: number;
    processes: number;
  }
  const samples: Sample[] = [];
  let rollDone = false;
  // The roll must happen under load however slow the machine is (children boot slower on a busy one):
  // the queue is topped up while it runs, so it never drains first.
  let pushed = N;
  const feeder = (async () => {
    while (!rollDone) {
      if ((await handle.redis.llen("queue:default")) < TOP_UP) {
        await push(
          "NapCountJob",
          Array.from({ length: TOP_UP }, (_, k) => [pushed + k, 50]),
        );
        pushed += TOP_UP;
      }
      await sleep(250);
    }
  })();
  const sampler = (async () => {
    while (!rollDone) {
      const [[, counted], [, queued], [, processes]] = (await handle.redis
        .multi()
        .get("counted")
        .llen("queue:default")
        .scard("processes")
        .exec()) as [unknown, unknown][] as [[null, string | null], [null, number], [null, number]];
      samples.push({ at: performance.now(), counted: Number(counted), queued, processes });
      await sleep(250);
    }
  })();

  const sent = performance.now();
  cluster.signal("SIGUSR2");
  try {
    await cluster.waitForLine((l) => l.role === "supervisor" && l.msg === "rolling restart finished", 120_000);
  } finally {
    rollDone = true;
    await Promise.all([sampler, feeder]);
  }
  const rollS = (performance.now() - sent) / 1000;
  const queuedAtEnd = await handle.redis.llen("queue:default");
  assert.ok(queuedAtEnd > 0, "the queue was still non-empty when the roll finished, so the whole roll was under load");
  assert.ok(
    !cluster.lines.some((l) => l.role === "supervisor" && typeof l.msg === "string" && l.msg.includes("did not start")),
    "no replacement failed",
  );

  // Every child replaced: none of the old identities or pids is left; CHILDREN new ones.
  const after = await waitForChildren(pid, CHILDREN, 10_000, cluster);
  for (const [identity, oldPid] of before) {
    assert.ok(!after.has(identity), `old identity ${identity} is gone`);
    assert.ok(!alive(oldPid), `old child ${oldPid} exited`);
  }
  assert.equal([...after.keys()].filter((id) => before.has(id)).length, 0);

  // Throughput never dropped to zero: while the queue was non-empty, every 250 ms sample saw progress.
  const stalls: string[] = [];
  for (let i = 1; i < samples.length; i++) {
    const [prev, cur] = [samples[i - 1]!, samples[i]!];
    if (prev.queued > 0 && cur.counted <= prev.counted)
      stalls.push(`${((prev.at - sent) / 1000).toFixed(2)}s→${((cur.at - sent) / 1000).toFixed(2)}s at ${cur.counted}`);
  }
  const rates = samples.slice(1).map((s, i) => (s.counted - samples[i]!.counted) / ((s.at - samples[i]!.at) / 1000));
  const minProcesses = Math.min(...samples.map((s) => s.processes));
  report(
    `USR2: roll took ${rollS.toFixed(1)} s over ${samples.length} samples; jobs/s per 250 ms sample min ${Math.round(Math.min(...rates))}, ` +
      `median ${Math.round([...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!)}; processes in Redis min ${minProcesses}; stalls: ${stalls.length}`,
  );
  assert.deepEqual(stalls, [], "no 250 ms sample without a completed job while the queue was non-empty");
  assert.ok(minProcesses >= CHILDREN - 1, `never below N-1 registered children: min ${minProcesses}`);

  // No job lost: the rest drains and every index ran (graceful stops finish or requeue in-flight jobs).
  await eventually(
    async () => (await handle.redis.bitcount("counted:bits")) === pushed,
    90_000,
    `all ${pushed} jobs ran`,
    250,
  );
  assert.equal(await handle.redis.llen("queue:default"), 0);
  assert.equal(await cluster.stop(), 0);
});
