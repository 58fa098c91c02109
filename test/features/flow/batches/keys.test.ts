/**
 * A batch's key names are built in two places that must agree: batchKey() in src/wire/keys/flow.ts and
 * lib/batch-keys.lua, which batch-open and batch-event include (they reach parent batches found as they
 * go, so those keys cannot be passed as KEYS). Every suffix the batch scripts use is one of the list.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BATCH_KEY_PARTS, BATCH_PREFIX, batchKey } from "../../../../src/wire/keys.js";
import { batchEventLua, batchJoinLua, batchOpenLua } from "../../../../src/features/flow/batches/scripts.js";

const lib = readFileSync(new URL("../../../../src/features/flow/batches/lib/batch-keys.lua", import.meta.url), "utf8");

test("lib/batch-keys.lua lists the same parts as keys.ts", () => {
  const list = /^local BATCH_PARTS = \{ (.*) \}$/m.exec(lib);
  assert.ok(list, "lib/batch-keys.lua declares BATCH_PARTS on one line");
  const parts = [...list[1]!.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  assert.deepEqual(parts, ["", ...BATCH_KEY_PARTS.map((part) => `:${part}`)]);
  for (const part of BATCH_KEY_PARTS) assert.equal(batchKey("b1", part), `${BATCH_PREFIX}b1:${part}`);
});

test("the batch scripts use no key suffix outside the list, and the join takes its keys as KEYS", () => {
  const known = new Set(BATCH_KEY_PARTS.map((part) => `:${part}`));
  for (const script of [batchOpenLua, batchEventLua]) {
    const file = script.file;
    const code = script
      .source()
      .split("\n")
      .filter((line) => !line.trimStart().startsWith("--"))
      .join("\n");
    assert.match(code, /local function batch_key\(/, `${file} includes lib/batch-keys.lua`);
    for (const [, suffix] of code.matchAll(/"(:[a-z_]+)"/g)) assert.ok(known.has(suffix!), `${file} uses ${suffix}`);
  }
  const join = batchJoinLua.source();
  assert.doesNotMatch(join, /\.\. ":/, "batch-join builds no key: it is given them");
});
