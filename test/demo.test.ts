/**
 * `npm run demo` + Ctrl-C, as a new user tries it: the terminal sends SIGINT to the whole foreground
 * process group. The demo must stop its cluster before its private Redis and leave no process behind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/tsqProcess.js";

/** Running, not exited (a zombie waiting for init to reap it has exited). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Processes whose command line mentions `text` (from /proc, no ps parsing). */
function processesMentioning(text: string): number[] {
  const found = spawnSync("pgrep", ["-f", text], { encoding: "utf8" });
  return found.stdout
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/** Starts the demo in its own process group, as a terminal would, until it has processed jobs. */
async function startDemo(): Promise<{
  demo: ReturnType<typeof spawn>;
  output: () => string;
  exited: Promise<number | null>;
  redisPids: number[];
}> {
  const env = { ...process.env };
  delete env.REDIS_URL; // the demo starts its own redis-server
  delete env.TSQ_LOG_FORMAT;
  // detached: a process group of its own, which the tests then signal as a terminal's Ctrl-C would.
  const demo = spawn(process.execPath, [join(ROOT, "scripts/demo.mjs"), "--seconds", "0"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  demo.stdout.on("data", (d: Buffer) => (output += d.toString()));
  demo.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => demo.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 40_000;
  while (!/summary \| processed=[1-9]/.test(output)) {
    if (Date.now() > deadline) assert.fail(`the demo never processed a job:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const port = /private redis-server on 127\.0\.0\.1:(\d+)/.exec(output)?.[1];
  assert.ok(port, output);
  const redisPids = processesMentioning(`redis-server 127.0.0.1:${port}`);
  assert.equal(redisPids.length, 1, `found the demo's redis-server: ${output.slice(0, 500)}`);
  return { demo, output: () => output, exited, redisPids };
}

/** Neither the demo's Redis, nor its cluster, nor the cluster's children outlive it. */
async function assertNothingLeft(output: string, redisPids: number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (redisPids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of redisPids) assert.ok(!alive(pid), "the demo's redis-server is gone");
  // This checkout's cluster only: a demo run from another checkout on the machine is not this test's.
  const cluster = `${escapeRegExp(join(ROOT, "bin/tsq-cluster.js"))} -r .*demoJobs`;
  assert.deepEqual(processesMentioning(cluster), [], "no tsq-cluster left");
  // Children print their identity, hostname:pid:random.
  const children = [...output.matchAll(/"identity":"[^"]*?:(\d+):[0-9a-f]+"/g)].map((m) => Number(m[1]));
  assert.ok(children.length >= 2, `saw the children start:\n${output.slice(0, 2000)}`);
  for (const pid of children) assert.ok(!alive(pid), `cluster child ${pid} is gone`);
}

function killGroup(pid: number | undefined): void {
  try {
    process.kill(-pid!, "SIGKILL");
  } catch {
    // gone, as it should be
  }
}

test(
  "Ctrl-C on npm run demo stops the cluster, then Redis, and leaves no process behind",
  { timeout: 90_000 },
  async () => {
    const { demo, output, exited, redisPids } = await startDemo();
    try {
      process.kill(-demo.pid!, "SIGINT");
      const code = await exited;
      assert.equal(code, 0, output().slice(-3000));
      assert.match(output(), /tsq-cluster exited with 0; processes left in Redis: 0/);
      assert.doesNotMatch(output(), /Redis connection lost/, "Redis outlived the cluster");
      await assertNothingLeft(output(), redisPids);
    } finally {
      killGroup(demo.pid);
    }
  },
);

test(
  "npm run demo | head: the reader going away stops the demo cleanly, nothing left running",
  { timeout: 90_000 },
  async () => {
    const { demo, output, exited, redisPids } = await startDemo();
    const seen = output();
    try {
      // `head` exits after its lines: the demo's next write meets a closed pipe (EPIPE).
      demo.stdout!.destroy();
      demo.stderr!.destroy();
      const code = await exited;
      assert.equal(code, 0, "the demo stops as on Ctrl-C");
      await assertNothingLeft(seen, redisPids);
    } finally {
      killGroup(demo.pid);
    }
  },
);
