/** LineBatch: a turn's log lines reach stdout as one write, in order, and nothing pending is lost at exit. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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
