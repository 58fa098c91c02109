/**
 * `npm run lint:paths` (scripts/check-paths.mjs): a comment, a Lua header or a doc that names a
 * repository path that does not exist fails the lint, naming the file and line; paths in code (a test
 * app's own files) and in Markdown code fences are not the repository's and are left alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/tsqProcess.js";
import { scratchDir } from "./helpers/fixtures.js";

function check(root: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [join(ROOT, "scripts/check-paths.mjs"), "--root", root], {
    encoding: "utf8",
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

test("a comment, a Lua header and a doc naming a moved file fail the lint; code and code fences do not", () => {
  const root = scratchDir("tsq-paths");
  mkdirSync(join(root, "src/server"), { recursive: true });
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, "src/server/Here.ts"), "// See src/server/Here.ts and src/locks/Gone.ts.\nexport {};\n");
  writeFileSync(join(root, "src/server/take-1.lua"), "-- take-1.lua: for src/server/Moved.ts\nreturn 1\n");
  writeFileSync(
    join(root, "docs/guide.md"),
    "Read src/server/Here.ts, then test/old/place.test.ts.\n\n```ts\nimport './src/app.ts';\n```\n",
  );
  writeFileSync(join(root, "src/server/app.ts"), 'export const file = "src/worker.js"; // the app\'s own\n');
  const failing = check(root);
  assert.equal(failing.status, 1, failing.output);
  const named = failing.output.split("\n").filter((line) => line.startsWith("  "));
  assert.deepEqual(named.map((line) => line.trim()).sort(), [
    "docs/guide.md:1: test/old/place.test.ts",
    "src/server/Here.ts:1: src/locks/Gone.ts",
    "src/server/take-1.lua:1: src/server/Moved.ts",
  ]);

  // Fixed, the same tree passes.
  writeFileSync(join(root, "src/server/Here.ts"), "// See src/server/Here.ts.\nexport {};\n");
  writeFileSync(join(root, "src/server/take-1.lua"), "-- take-1.lua: for src/server/Here.ts\nreturn 1\n");
  writeFileSync(join(root, "docs/guide.md"), "Read src/server/Here.ts.\n");
  const passing = check(root);
  assert.equal(passing.status, 0, passing.output);
});

test("the repository's own comments and docs name only paths that exist", () => {
  const run = check(ROOT);
  assert.equal(run.status, 0, run.output);
});
