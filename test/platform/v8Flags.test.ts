/** The V8 settings of job-running processes: added to a child's node options unless the user set them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { childExecArgv } from "../../src/platform/v8Flags.js";

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
