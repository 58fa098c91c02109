/** `routing_rules:` in the config file: read, checked, merged per environment, and fed to tsq's options. */
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import { ConfigError } from "../../../src/wire/errors.js";

const dir = mkdtempSync(join(tmpdir(), "tsq-routing-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function load(text: string, environment = "development") {
  const path = join(dir, `config-${++files}.yml`);
  writeFileSync(path, text);
  return loadConfig(path, environment, "config/tsq.yml");
}

function rejects(text: string, message: RegExp): void {
  assert.throws(
    () => load(text),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, message);
      return true;
    },
  );
}

describe("routing_rules in the config file", () => {
  test("pairs of query and queue, in order; null and empty queues mean the generated name", () => {
    const settings = load(
      'routing_rules:\n  - ["resource_boundary=cpu", "cpu_boundary"]\n  - [feature_category=importers, null]\n  - ["tags=x", ""]\n  - ["*", default]\n',
    );
    assert.deepEqual(settings.routingRules, [
      ["resource_boundary=cpu", "cpu_boundary"],
      ["feature_category=importers", null],
      ["tags=x", ""],
      ["*", "default"],
    ]);
    assert.deepEqual(load("routing_rules:\n").routingRules, []);
  });

  test("an environment section replaces the top-level rules", () => {
    const text =
      'routing_rules: [["*", "default"]]\nproduction:\n  routing_rules: [["urgency=high", "urgent"], ["*", "rest"]]\n';
    assert.deepEqual(load(text).routingRules, [["*", "default"]]);
    assert.deepEqual(load(text, "production").routingRules, [
      ["urgency=high", "urgent"],
      ["*", "rest"],
    ]);
  });

  test("bad shapes and bad queries name the rule", () => {
    rejects("routing_rules: default\n", /config\/tsq\.yml: routing_rules must be a list of \[query, queue\] pairs/);
    rejects('routing_rules: [["*"]]\n', /config\/tsq\.yml: routing_rules\[0\] must be a \[query, queue\] pair/);
    rejects('routing_rules: [["*", 5]]\n', /routing_rules\[0\] must be a \[query, queue\] pair/);
    rejects(
      'routing_rules: [["*", "a"], ["urgency=high&", "b"]]\n',
      /^config\/tsq\.yml: routing_rules\[1\]: the query "urgency=high&" has an empty term/,
    );
    rejects(
      'routing_rules: [["*", "a b"]]\n',
      /config\/tsq\.yml: routing_rules\[0\]: the queue "a b" is not a queue name/,
    );
  });
});
