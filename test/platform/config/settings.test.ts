/**
 * A plug-in's settings (defineSetting): the worker's value or the default, of the default's kind, within
 * bounds; anything else a ConfigError naming the key, as the worker is built. Its names outside code
 * (file key, environment variable, flag) as the entry points read them, with the core's precedence.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSetting } from "../../../src/platform/config/settings.js";
import { ArgumentError, ConfigError } from "../../../src/wire/errors.js";
import { resolveWorkerOptions, UsageError } from "../../../src/options/workerOptions.js";
import { buildWorkerCommand } from "../../../src/options/workerFlags.js";
import { workerOptionsOf } from "../../../src/library/workerConfig.js";
import { settingsOf, type Plugin } from "../../../src/server/plugin.js";

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

/** A setting with every name it may go by: file key, environment variable and flag. */
const depth = defineSetting({
  key: "auditDepth",
  default: 4,
  min: 1,
  max: 100,
  integer: true,
  unit: "levels",
  env: "TSQ_AUDIT_DEPTH",
  flag: "--audit-depth",
});

test("the names a setting goes by: its file key is its key in snake_case unless given, or none", () => {
  assert.equal(depth.fileKey, "audit_depth");
  assert.equal(defineSetting({ key: "auditDepth", default: 1, file: "audit_levels" }).fileKey, "audit_levels");
  assert.equal(defineSetting({ key: "auditDepth", default: 1, file: false }).fileKey, undefined);
  assert.equal(depth.expected, "an integer from 1 to 100 (levels)");
  for (const spec of [{ file: "AuditDepth" }, { env: "tsq_audit" }, { flag: "-a" }, { flag: "--Audit" }])
    assert.throws(() => defineSetting({ key: "auditDepth", default: 1, ...spec }), TypeError, JSON.stringify(spec));
});

describe("a plug-in setting through the entry points' options", () => {
  const cwd = mkdtempSync(join(tmpdir(), "tsq-settings-"));
  after(() => rmSync(cwd, { recursive: true, force: true }));
  mkdirSync(join(cwd, "config"));
  const write = (text: string) => writeFileSync(join(cwd, "config/tsq.yml"), text);
  const resolve = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    (resolveWorkerOptions(argv, env, cwd, [depth]).options as { auditDepth?: number }).auditDepth;

  test("flag over file over environment over default; unset, absent (the plug-in reads the default)", () => {
    write("");
    assert.equal(resolve([]), undefined);
    assert.equal(depth.read({}), 4);
    assert.equal(resolve([], { TSQ_AUDIT_DEPTH: "7" }), 7);
    assert.equal(resolve([], { TSQ_AUDIT_DEPTH: "" }), undefined, "an empty variable counts as unset");
    write("audit_depth: 8\n");
    assert.equal(resolve([], { TSQ_AUDIT_DEPTH: "7" }), 8);
    assert.equal(resolve(["--audit-depth", "9"], { TSQ_AUDIT_DEPTH: "7" }), 9);
    assert.match(buildWorkerCommand([depth]).helpInformation(), /--audit-depth <value> +an integer from 1 to 100/);
  });

  test("a bad value is refused naming where it came from and what is expected", () => {
    write("");
    for (const bad of ["0", "-1", "NaN", "1.5", "1e9", "101", "ten"]) {
      assert.throws(
        () => resolve([], { TSQ_AUDIT_DEPTH: bad }),
        new ConfigError(
          `TSQ_AUDIT_DEPTH must be an integer from 1 to 100 (levels), got ${JSON.stringify(bad)}; fix or unset it`,
        ),
      );
      assert.throws(
        () => resolve(["--audit-depth", bad]),
        (error: unknown) =>
          error instanceof UsageError &&
          /'--audit-depth <value>' argument .* is invalid\. Expected an integer/.test(error.message),
      );
    }
    write("audit_depth: 0.5\n");
    assert.throws(
      () => resolve([]),
      new ConfigError("config/tsq.yml: audit_depth must be an integer from 1 to 100 (levels), got 0.5"),
    );
  });

  test("new Worker's options: out of bounds refused by name, as the core's", () => {
    const options = workerOptionsOf({ options: { auditDepth: 5 } as object }, "Worker", [depth]);
    assert.equal((options as { auditDepth?: number }).auditDepth, 5);
    assert.throws(
      () => workerOptionsOf({ options: { auditDepth: 0 } as object }, "Worker", [depth]),
      new ArgumentError("Worker: `options.auditDepth` must be an integer from 1 to 100 (levels), got 0"),
    );
  });

  test("one setting per name in a plug-in list: the same object twice is one, two under one name refused", () => {
    const first: Plugin = { name: "first", settings: [depth] };
    const second: Plugin = { name: "second", settings: [depth] };
    assert.deepEqual(settingsOf([first, second]), [depth]);
    const clash: Plugin = {
      name: "clash",
      settings: [defineSetting({ key: "otherDepth", default: 1, file: "audit_depth" })],
    };
    assert.throws(() => settingsOf([first, clash]), /two settings of the plug-in list are named "audit_depth"/);
    const shadow: Plugin = { name: "shadow", settings: [defineSetting({ key: "heartbeatInterval", default: 1 })] };
    assert.throws(() => settingsOf([shadow]), /a plug-in setting is named "heartbeatInterval", a setting of tsq's own/);
  });
});
