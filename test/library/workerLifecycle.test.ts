/**
 * Lifecycle calls that always end, measured on real processes: a small app script (node, importing the
 * built package) does one thing and prints a mark; the test times how long the process lives past it.
 * Nothing tsq made may keep the event loop alive once stop() resolved, a wait settled, or a worker was
 * built and never started; start() against a dead Redis rejects within its startTimeout.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { freePort, useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { Worker } from "../../src/library/Worker.js";
import { Job } from "../../src/client/Job.js";

const handle = useRedis();

/** ms a process may live past its mark: generous for a loaded machine (before these fixes: 2 s to never). */
const EXIT_BOUND_MS = 5_000;
/** ms after which a script still running is killed and the test fails. */
const KILL_AFTER_MS = 30_000;

const PRELUDE = `
const tsq = await import(${JSON.stringify(pathToFileURL(join(ROOT, "dist/src/index.js")).href)});
const T0 = performance.now();
const mark = (name, extra = {}) => console.log(JSON.stringify({ mark: name, at_ms: Math.round(performance.now() - T0), ...extra }));
class Noop extends tsq.Job { perform() {} }
class Add extends tsq.Job { static options = { result: { ttl: 60 } }; perform(a, b) { return a + b; } }
const url = process.env.REDIS_URL;
`;

interface Run {
  lines: Record<string, unknown>[];
  marks: Map<string, Record<string, unknown>>;
  /** ms from the last mark's arrival to the process's exit; undefined when it had to be killed. */
  exitAfterMarkMs: number | undefined;
  output: string;
}

function runScript(body: string, env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PRELUDE + body], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: handle.url, TSQ_LOG_FORMAT: "json", TSQ_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const marks = new Map<string, Record<string, unknown>>();
  let output = "";
  let markAt: number | undefined;
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const parts = pending.split("\n");
    pending = parts.pop()!;
    for (const part of parts) {
      try {
        const line = JSON.parse(part) as Record<string, unknown>;
        lines.push(line);
        if (typeof line.mark === "string") {
          marks.set(line.mark, line);
          markAt = performance.now();
        }
      } catch {
        // not a JSON line: kept in `output` for the failure message
      }
    }
  });
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    child.on("exit", (_code, signal) => {
      clearTimeout(killer);
      const exitAfterMarkMs = signal === "SIGKILL" || markAt === undefined ? undefined : performance.now() - markAt;
      resolve({ lines, marks, exitAfterMarkMs, output });
    });
  });
}

/** Asserts the process exited within EXIT_BOUND_MS of its last mark, and reports the time measured. */
function exitedPromptly(t: TestContext, run: Run, after: string): void {
  const ms = run.exitAfterMarkMs;
  t.diagnostic(
    `process exit ${ms === undefined ? `never (killed after ${KILL_AFTER_MS} ms)` : `${Math.round(ms)} ms`} after ${after}`,
  );
  assert.ok(
    ms !== undefined && ms < EXIT_BOUND_MS,
    `the process must exit within ${EXIT_BOUND_MS} ms of ${after}: ${run.output}`,
  );
}

/** Lines at warn or above (pino: 40 warn, 50 error, 60 fatal). */
function complaints(run: Run): Record<string, unknown>[] {
  return run.lines.filter((line) => typeof line.level === "number" && line.level >= 40);
}

test("a Worker built and never started holds nothing: the process exits", async (t) => {
  const run = await runScript(`new tsq.Worker({ redis: url, jobs: [Noop] }); mark("built");`);
  exitedPromptly(t, run, "the Worker was built");
});

test("start() against a port where nothing listens rejects within startTimeout, then the process exits", async (t) => {
  const port = await freePort();
  const run = await runScript(`
    const worker = new tsq.Worker({ redis: "redis://127.0.0.1:${port}/0", jobs: [Noop], startTimeout: 2 });
    const began = performance.now();
    try { await worker.start(); mark("started"); }
    catch (error) { mark("rejected", { elapsed_ms: Math.round(performance.now() - began), message: error.message }); }
  `);
  const rejected = run.marks.get("rejected");
  assert.ok(rejected, `start() must reject: ${run.output}`);
  const elapsed = rejected.elapsed_ms as number;
  t.diagnostic(`start() rejected after ${elapsed} ms (startTimeout 2 s)`);
  assert.ok(elapsed >= 1_900 && elapsed < 2_000 + 8_000, `rejected after ${elapsed} ms`);
  assert.match(rejected.message as string, new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port}.*startTimeout`));
  exitedPromptly(t, run, "start() rejected");
});

test("stop() right after start(): no false warning, and the process exits once stop() resolved", async (t) => {
  const run = await runScript(`
    const worker = new tsq.Worker({ redis: url, jobs: [Noop] });
    await worker.start();
    await worker.stop();
    mark("stopped");
  `);
  assert.ok(run.marks.has("stopped"), run.output);
  assert.deepEqual(complaints(run), [], "a stop right after the start warns of nothing");
  exitedPromptly(t, run, "stop() resolved");
});

test("stop() during start(): the pending start rejects saying so, nothing false is logged, the process exits", async (t) => {
  for (const delayMs of [0, 5]) {
    const run = await runScript(`
      const worker = new tsq.Worker({ redis: url, jobs: [Noop] });
      const started = worker.start().then(() => "resolved", (error) => "rejected: " + error.message);
      await new Promise((resolve) => setTimeout(resolve, ${delayMs}));
      await worker.stop();
      mark("stopped", { start: await started });
    `);
    assert.match(
      String(run.marks.get("stopped")?.start),
      /^rejected: Worker\.start\(\): stop\(\) was called before the start finished/,
      run.output,
    );
    assert.deepEqual(complaints(run), [], `stop ${delayMs} ms into the start logs no warning`);
    exitedPromptly(t, run, `stop() resolved (${delayMs} ms into the start)`);
  }
});

test("a one-shot waitUntilFinished (no client, no watcher given) holds nothing once it settled", async (t) => {
  const run = await runScript(`
    const worker = new tsq.Worker({ redis: url, jobs: [Add] });
    await worker.start();
    const client = new tsq.Client({ redis: url });
    const jid = await client.push({ class: Add, args: [1, 2] });
    const result = await tsq.waitUntilFinished(jid, { timeout: 20 });
    await worker.stop();
    await client.close();
    mark("stopped", { result });
  `);
  assert.deepEqual(run.marks.get("stopped")?.result, { status: "done", result: 3 }, run.output);
  exitedPromptly(t, run, "the wait settled and the app closed what it opened");
});

test("a shared OutcomeWatcher closes its connections when no wait is pending", async (t) => {
  const run = await runScript(`
    const worker = new tsq.Worker({ redis: url, jobs: [Add] });
    await worker.start();
    const client = new tsq.Client({ redis: url });
    const watcher = new tsq.OutcomeWatcher({ client });
    const jids = await Promise.all([client.push({ class: Add, args: [1, 2] }), client.push({ class: Add, args: [3, 4] })]);
    const results = await Promise.all(jids.map((jid) => watcher.wait(jid, { timeout: 20 })));
    await worker.stop();
    await client.close();
    mark("stopped", { results });  // the watcher is not closed: idle, it must hold nothing
  `);
  assert.deepEqual(
    run.marks.get("stopped")?.results,
    [
      { status: "done", result: 3 },
      { status: "done", result: 7 },
    ],
    run.output,
  );
  exitedPromptly(t, run, "the last wait of a shared watcher settled");
});

test("startTimeout: seconds above 0 up to a day, or Infinity; anything else is refused by name", () => {
  class Noop extends Job {
    perform() {}
  }
  const month = 30 * 24 * 60 * 60;
  for (const bad of [0, -1, Number.NaN, month, 365 * 24 * 60 * 60, "30"]) {
    assert.throws(
      () => new Worker({ redis: handle.url, jobs: [Noop], startTimeout: bad as number }),
      /Worker: `startTimeout` must be seconds above 0 and at most 86400, or Infinity/,
      `startTimeout ${String(bad)}`,
    );
  }
  // Built and never started: nothing to stop.
  for (const good of [0.5, 86_400, Infinity]) new Worker({ redis: handle.url, jobs: [Noop], startTimeout: good });
});
