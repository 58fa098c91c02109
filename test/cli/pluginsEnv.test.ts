/**
 * TSQ_PLUGINS is checked with the other options: a value other than "all" or "none" stops `tsq` and
 * `tsq-cluster` before anything connects or forks, with exit 2 and a message naming what is accepted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, TEST_JOBS } from "../helpers/tsqProcess.js";
import { giveUpAfter } from "../helpers/timing.js";

for (const bin of ["bin/tsq.js", "bin/tsq-cluster.js"]) {
  test(`${bin} with TSQ_PLUGINS=some exits 2 naming the accepted values`, () => {
    const run = spawnSync(process.execPath, [join(ROOT, bin), "-r", TEST_JOBS], {
      // Port 1: nothing listens, so a process that got past the check would fail differently.
      env: { ...process.env, REDIS_URL: "redis://127.0.0.1:1/0", TSQ_PLUGINS: "some" },
      encoding: "utf8",
      timeout: giveUpAfter(30_000),
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /TSQ_PLUGINS must be "all" \(the default\) or "none", got "some"/);
    assert.doesNotMatch(run.stderr, /at .*\.js:\d+/, "no stack trace");
  });
}
