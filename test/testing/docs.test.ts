/**
 * docs/testing.md's node:test examples are these test files, word for word: each block marked
 * `<!-- example: test/testing/<file> -->` must equal its file, which runs in the suite.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const root = new URL("../../../", import.meta.url);

test("every node:test example in docs/testing.md is a test file that runs, unchanged", () => {
  const doc = readFileSync(new URL("docs/testing.md", root), "utf8");
  const examples = [...doc.matchAll(/<!-- example: (test\/testing\/[\w.-]+\.test\.ts) -->\s*```ts\n([\s\S]*?)\n```/g)];
  assert.deepEqual(
    examples.map(([, file]) => file),
    ["test/testing/example-fake.test.ts", "test/testing/example-inline.test.ts", "test/testing/example-worker.test.ts"],
  );
  for (const [, file, code] of examples) {
    assert.equal(
      code,
      readFileSync(new URL(file!, root), "utf8").trimEnd(),
      `${file} differs from its block in the docs`,
    );
  }
});
