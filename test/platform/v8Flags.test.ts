/** The V8 settings of job-running processes: added to a child's node options unless the user set them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { childExecArgv } from "../../src/platform/v8Flags.js";
import { giveUpAfter } from "../helpers/timing.js";

test("a child gets the semi-space cap and pretenuring off, after the parent's own node options", () => {
  assert.deepEqual(childExecArgv(["--enable-source-maps"], ""), [
    "--enable-source-maps",
    "--max-semi-space-size=4",
    "--no-allocation-site-pretenuring",
  ]);
});

test("a setting the user gave, on the command line or in NODE_OPTIONS, in either spelling, is kept as given", () => {
  assert.deepEqual(childExecArgv(["--max-semi-space-size=16"], ""), [
    "--max-semi-space-size=16",
    "--no-allocation-site-pretenuring",
  ]);
  assert.deepEqual(childExecArgv([], "--max_semi_space_size=8 --allocation-site-pretenuring"), []);
});

// A process that keeps about 20,000 objects alive while it allocates, as a drain keeps its jobs in
// flight: V8 grows the young generation to 16 MB semi-spaces under that survival. It prints the largest
// new space it saw, in MB.
const ALLOCATE = `
  import v8 from "node:v8";
  const { applyWorkerV8Flags } = await import(process.argv[1]);
  if (process.argv[2] === "capped") applyWorkerV8Flags([], "");
  const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
  const live = [];
  let largest = 0;
  for (let i = 0; i < 2e6; i++) {
    live.push({ i, text: "job " + i });
    if (live.length > 20000) live.splice(0, 10000);
    if (i % 10000 === 0) {
      largest = Math.max(largest, newSpace());
      await new Promise(setImmediate); // the observer reports between turns, as between a worker's batches
    }
  }
  console.log(largest / 1048576);
`;

function largestNewSpaceMb(mode: string): number {
  const moduleUrl = new URL("../../src/platform/v8Flags.js", import.meta.url).href;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", ALLOCATE, moduleUrl, mode], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
    timeout: giveUpAfter(60_000),
  });
  assert.equal(run.status, 0, run.stderr);
  return Number(run.stdout.trim());
}

test("a tsq worker holds its semi-spaces at 4 MB from inside the process, where V8 alone grows them to 16", () => {
  const free = largestNewSpaceMb("default");
  const capped = largestNewSpaceMb("capped");
  assert.ok(free >= 16, `without the cap the new space grows past 16 MB (saw ${free} MB)`);
  assert.ok(capped <= 8, `with the cap the new space (two semi-spaces) stays at 8 MB or less (saw ${capped} MB)`);
});
