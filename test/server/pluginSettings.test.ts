/**
 * A plug-in's settings (defineSetting): the worker's value or the default, of the default's kind, within
 * bounds; anything else a ConfigError naming the key, as the worker is built.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineSetting } from "../../src/server/pluginSettings.js";
import { ConfigError } from "../../src/wire/errors.js";

const refused = (key: string) => (error: unknown) =>
  error instanceof ConfigError && error.message.includes(`\`${key}\``);

test("a number setting: the default when unset, the worker's value when within bounds", () => {
  const seconds = defineSetting({ key: "auditHoldSeconds", default: 60, min: 1, max: 86_400, integer: true });
  assert.equal(seconds.read({}), 60);
  assert.equal(seconds.read({ auditHoldSeconds: undefined }), 60);
  assert.equal(seconds.read({ auditHoldSeconds: 86_400 }), 86_400);
  // 0, negative, NaN, a fraction, a month and a year (past setTimeout's 24.8 days) are refused by name.
  for (const bad of [0, -1, Number.NaN, 1.5, 2_592_000, 31_536_000, Number.POSITIVE_INFINITY])
    assert.throws(() => seconds.read({ auditHoldSeconds: bad }), refused("auditHoldSeconds"), String(bad));
});

test("a setting of another kind than its default's is refused; strings and booleans have no bounds", () => {
  const stream = defineSetting({ key: "auditStream", default: "audit" });
  const enabled = defineSetting({ key: "auditEnabled", default: true });
  assert.equal(stream.read({ auditStream: "other" }), "other");
  assert.equal(enabled.read({ auditEnabled: false }), false);
  assert.throws(() => stream.read({ auditStream: 3 }), refused("auditStream"));
  assert.throws(() => enabled.read({ auditEnabled: "yes" }), refused("auditEnabled"));
});

test("a key is a worker option's camelCase name", () => {
  for (const key of ["audit_max", "AuditMax", "", "audit-max"])
    assert.throws(() => defineSetting({ key, default: 1 }), TypeError, key);
});
