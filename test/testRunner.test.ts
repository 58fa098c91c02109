/**
 * The suite's own reporter (scripts/test-durations.mjs): each file's whole process time, keyed as
 * test/durations.json keys it, and how long a file's process outlived its last test, which
 * scripts/run-tests.mjs fails the run on. Real `node --test` runs of two small files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/tsqProcess.js";
import { scratchDir } from "./helpers/fixtures.js";

test("the reporter times whole file processes and finds a file that outlives its tests", () => {
  const dir = scratchDir("tsq-reporter");
  mkdirSync(join(dir, "dist/test"), { recursive: true });
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  // One file leaves a 3 s timer behind; the other cleans up after itself.
  writeFileSync(
    join(dir, "dist/test/lingers.test.js"),
    'import { test } from "node:test";\ntest("quick", () => {});\nsetTimeout(() => {}, 3000);\n',
  );
  writeFileSync(
    join(dir, "dist/test/clean.test.js"),
    'import { test } from "node:test";\ntest("quick", () => { clearTimeout(setTimeout(() => {}, 3000)); });\n',
  );
  const report = join(dir, "report.json");
  const durations = join(dir, "durations.json");
  // Without NODE_TEST_CONTEXT, which this file's runner sets: the nested run must report for itself.
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  const run = spawnSync(
    process.execPath,
    [
      "--test",
      `--test-reporter=${join(ROOT, "scripts/test-durations.mjs")}`,
      "--test-reporter-destination=stdout",
      "dist/test/lingers.test.js",
      "dist/test/clean.test.js",
    ],
    { cwd: dir, encoding: "utf8", env: { ...env, TSQ_TEST_REPORT: report, TSQ_TEST_DURATIONS: durations } },
  );
  assert.equal(run.status, 0, run.stderr);
  const { lingered } = JSON.parse(readFileSync(report, "utf8")) as { lingered: Record<string, number> };
  assert.ok(lingered["test/lingers.test"]! >= 2.5, `the leftover timer held the process: ${JSON.stringify(lingered)}`);
  assert.ok(lingered["test/clean.test"]! < 1, `a clean file exits at once: ${JSON.stringify(lingered)}`);
  const seconds = JSON.parse(readFileSync(durations, "utf8")) as Record<string, number>;
  assert.deepEqual(
    Object.keys(seconds),
    ["test/lingers.test", "test/clean.test"],
    "keyed as test/durations.json, longest first",
  );
  assert.ok(seconds["test/lingers.test"]! >= 3, "a file's time runs until its process exits");
});
