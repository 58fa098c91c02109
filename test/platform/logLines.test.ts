/** LineBatch: a turn's log lines reach stdout as one write, in order, and nothing pending is lost at exit. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { LineBatch } from "../../src/platform/logLines.js";

test("the lines of one turn go out as one write, in order, at the end of the turn", async () => {
  const writes: string[] = [];
  const batch = new LineBatch({ write: (s: string) => void writes.push(s) });
  batch.write("a\n");
  batch.write("b\n");
  batch.write("c\n");
  assert.deepEqual(writes, [], "held until the turn ends");
  await new Promise((resolve) => setImmediate(resolve));
  batch.write("d\n");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, ["a\nb\nc\n", "d\n"]);
});

test("a process that exits in the turn it logged still writes every line (tsq's default stdout)", () => {
  const logger = new URL("../../src/platform/logger.js", import.meta.url).href;
  const script = `
    const { logger } = await import(${JSON.stringify(logger)});
    for (let i = 0; i < 5000; i++) logger.info({ i }, "line");
    process.exit(0);`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, TSQ_LOG_LEVEL: "info", TSQ_LOG_FORMAT: "json" },
    encoding: "utf8",
    cwd: fileURLToPath(new URL(".", import.meta.url)),
  });
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.trim().split("\n");
  assert.equal(lines.length, 5000);
  assert.deepEqual(
    lines.map((line) => (JSON.parse(line) as { i: number }).i),
    Array.from({ length: 5000 }, (_, i) => i),
  );
});

/** Runs `script` (an ES module) with its stdout on a pipe that this process reads only when `read` says. */
function runPiped(script: string): { child: ChildProcess; output: () => Promise<string> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, TSQ_LOG_LEVEL: "info", TSQ_LOG_FORMAT: "json" },
    cwd: fileURLToPath(new URL(".", import.meta.url)),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  const exited = once(child, "exit");
  return {
    child,
    output: async () => {
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0);
      return Buffer.concat(chunks).toString();
    },
  };
}

test("a reader that stops reading for a while loses no line and gets them in order (stdout non-blocking, the pipe full)", async () => {
  const logger = new URL("../../src/platform/logger.js", import.meta.url).href;
  // process.stdout touched first: Node then makes fd 1 non-blocking, so a full pipe answers EAGAIN.
  const script = `
    process.stdout;
    const { logger } = await import(${JSON.stringify(logger)});
    const padding = "x".repeat(200);
    for (let turn = 0; turn < 40; turn++) {
      for (let i = 0; i < 500; i++) logger.info({ n: turn * 500 + i, padding }, "line");
      await new Promise((resolve) => setImmediate(resolve));
    }`;
  const { child, output } = runPiped(script);
  child.stdout!.pause();
  // About 5 MB against a 64 KB pipe: the writer meets a full pipe many times while nothing is read.
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.stdout!.resume();
  const lines = (await output()).trim().split("\n");
  assert.equal(lines.length, 20_000);
  assert.ok(
    lines.every((line, n) => (JSON.parse(line) as { n: number }).n === n),
    "every line whole and in order",
  );
});

test("a reader that went away does not stop the worker: its lines are dropped, the process goes on and exits 0", async () => {
  const logger = new URL("../../src/platform/logger.js", import.meta.url).href;
  const script = `
    const { logger } = await import(${JSON.stringify(logger)});
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 1000; i++) logger.info({ i }, "after the reader left");
    await new Promise((resolve) => setImmediate(resolve));
    process.stderr.write("still here\\n");`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, TSQ_LOG_LEVEL: "info", TSQ_LOG_FORMAT: "json" },
    cwd: fileURLToPath(new URL(".", import.meta.url)),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.destroy(); // the read end closed: writes now fail with EPIPE
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  assert.equal(code, 0, stderr);
  assert.match(stderr, /still here/);
});
