/**
 * docs/testing.md's examples are test files, word for word: each block marked `<!-- example: <file> -->`
 * must equal its file. The node:test ones (test/testing) run in the suite; the Vitest and Jest ones run
 * in the package test's apps (test/package/tarball.slow.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const root = new URL("../../../", import.meta.url);

test("every example test in docs/testing.md is a test file that runs, unchanged", () => {
  const doc = readFileSync(new URL("docs/testing.md", root), "utf8");
  const examples = [
    ...doc.matchAll(/<!-- example: (test\/[\w./-]+\.test\.(?:ts|js)) -->\s*```(?:ts|js)\n([\s\S]*?)\n```/g),
  ];
  assert.deepEqual(
    examples.map(([, file]) => file),
    [
      "test/testing/example-fake.test.ts",
      "test/testing/example-inline.test.ts",
      "test/testing/example-durable.test.ts",
      "test/testing/example-worker.test.ts",
      "test/package/apps/esm/test/signup.test.ts",
      "test/package/apps/cjs/jest/modes.test.js",
      "test/package/apps/esm/jest/modes.test.ts",
    ],
  );
  for (const [, file, code] of examples) {
    assert.equal(
      code,
      readFileSync(new URL(file!, root), "utf8").trimEnd(),
      `${file} differs from its block in the docs`,
    );
  }
});
