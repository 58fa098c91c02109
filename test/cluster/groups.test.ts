import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatPlan, formatQueueList, parseGroup, planChildren, resolveGroups } from "../../src/cluster/groups.js";
import type { QueueSpec } from "../../src/platform/config/options.js";
import { ConfigError } from "../../src/wire/errors.js";

const known = ["a", "b", "c", "d", "cronjob:x", "cronjob:y"];

/** Queues with no weight (strict order). */
function strict(...names: string[]): QueueSpec[] {
  return names.map((name) => ({ name, weight: 0 }));
}

function configError(run: () => unknown, message: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.message, message);
    return true;
  });
}

describe("resolveGroups", () => {
  test('"a,b" c "*": one queue list per group, "*" is every known queue in the given order', () => {
    assert.deepEqual(resolveGroups(["a,b", "c", "*"], known), [
      strict("a", "b"),
      strict("c"),
      strict("a", "b", "c", "d", "cronjob:x", "cronjob:y"),
    ]);
  });

  test("a bare name selects its namespace, and itself even when not known", () => {
    assert.deepEqual(resolveGroups(["cronjob"], known), [strict("cronjob", "cronjob:x", "cronjob:y")]);
    assert.deepEqual(resolveGroups(["cronjob:x"], known), [strict("cronjob:x")]);
    assert.deepEqual(resolveGroups(["new"], []), [strict("new")]);
    // A prefix is not a namespace: "cron" does not select "cronjob:x".
    assert.deepEqual(resolveGroups(["cron"], known), [strict("cron")]);
  });

  test("a queue named twice gets weight 2, the others 1", () => {
    assert.deepEqual(resolveGroups(["a,a,b"], known), [
      [
        { name: "a", weight: 2 },
        { name: "b", weight: 1 },
      ],
    ]);
    assert.deepEqual(resolveGroups(["b,a,a,a"], known), [
      [
        { name: "b", weight: 1 },
        { name: "a", weight: 3 },
      ],
    ]);
  });

  test("repeating a namespace weights all its queues, as GitLab's tally does", () => {
    assert.deepEqual(resolveGroups(["cronjob,cronjob,a"], known), [
      [
        { name: "cronjob", weight: 2 },
        { name: "cronjob:x", weight: 2 },
        { name: "cronjob:y", weight: 2 },
        { name: "a", weight: 1 },
      ],
    ]);
  });

  test('"*" and a name select a queue once; naming it twice still weighs it', () => {
    assert.deepEqual(resolveGroups(["c,*"], known), [strict("c", "a", "b", "d", "cronjob:x", "cronjob:y")]);
    assert.deepEqual(resolveGroups(["*,c,c"], ["a", "c"]), [
      [
        { name: "a", weight: 1 },
        { name: "c", weight: 2 },
      ],
    ]);
    assert.deepEqual(resolveGroups(["*,*"], ["a", "c"]), [
      [
        { name: "a", weight: 2 },
        { name: "c", weight: 2 },
      ],
    ]);
  });

  test("spaces around names are ignored, and known queues are de-duplicated", () => {
    assert.deepEqual(resolveGroups([" a , b "], known), [strict("a", "b")]);
    assert.deepEqual(resolveGroups(["*"], ["a", "a", "b"]), [strict("a", "b")]);
  });

  test("every error names the group", () => {
    configError(
      () => resolveGroups(["a", ""], known),
      'queue group 1 ("") is empty; give a comma-separated list of queues, e.g. "critical,default", or "*" for every queue',
    );
    configError(
      () => resolveGroups(["  "], known),
      'queue group 0 ("  ") is empty; give a comma-separated list of queues, e.g. "critical,default", or "*" for every queue',
    );
    configError(
      () => resolveGroups(["a,,b"], known),
      'queue group 0 ("a,,b") has an empty queue name; remove the extra comma',
    );
    configError(
      () => resolveGroups(["a,"], known),
      'queue group 0 ("a,") has an empty queue name; remove the extra comma',
    );
    configError(
      () => resolveGroups(["a b"], known),
      'queue group 0 ("a b") has a queue name with whitespace, "a b"; separate queues with commas',
    );
    configError(
      () => resolveGroups(["cron*"], known),
      'queue group 0 ("cron*") has "cron*", but only a lone "*" is a wildcard; ' +
        'a bare name already selects its namespace ("cronjob" selects every "cronjob:*" queue)',
    );
    configError(
      () => resolveGroups(["a", "*"], []),
      'queue group 1 ("*") matches no queue: "*" means every known queue, and the known queues come from ' +
        'the Redis "queues" set and the job module\'s classes (-r), which have none; name the queues instead, e.g. "critical,default"',
    );
  });

  test("parseGroup checks syntax without known queues", () => {
    assert.deepEqual(parseGroup("a, *,cronjob", 0), ["a", "*", "cronjob"]);
  });
});

describe("planChildren", () => {
  const groups = resolveGroups(["a,b", "c", "*"], known);
  const labels = ["a,b", "c", "*"];

  test("one child per group, numbered across groups", () => {
    const plan = planChildren(groups, 1, 10, labels);
    assert.deepEqual(
      plan.map(({ index, group, groupLabel, queues, concurrency }) => [
        index,
        group,
        groupLabel,
        queues.map((q) => q.name),
        concurrency,
      ]),
      [
        [0, 0, "a,b", ["a", "b"], 10],
        [1, 1, "c", ["c"], 10],
        [2, 2, "*", ["a", "b", "c", "d", "cronjob:x", "cronjob:y"], 10],
      ],
    );
  });

  test("--processes 2: two children per group", () => {
    const plan = planChildren(groups, 2, 5, labels);
    assert.deepEqual(
      plan.map(({ index, group }) => [index, group]),
      [
        [0, 0],
        [1, 0],
        [2, 1],
        [3, 1],
        [4, 2],
        [5, 2],
      ],
    );
    assert.notEqual(plan[0]?.queues, plan[1]?.queues, "each child gets its own queue list");
    assert.deepEqual(plan[0]?.queues, plan[1]?.queues);
  });

  test("mismatched labels and a bad process count are programming errors", () => {
    assert.throws(() => planChildren(groups, 1, 10, ["a,b"]), RangeError);
    assert.throws(() => planChildren(groups, 0, 10, labels), RangeError);
  });
});

describe("formatting", () => {
  test("--dryrun: one line per child, weights when given", () => {
    const plan = planChildren(resolveGroups(["a,b", "a,a,b"], known), 1, 10, ["a,b", "a,a,b"]);
    assert.equal(
      formatPlan(plan),
      'child 0 (group 0 "a,b"): queues a, b; concurrency 10\n' +
        'child 1 (group 1 "a,a,b"): queues a (weight 2), b (weight 1); concurrency 10',
    );
  });

  test("--list-queues: each queue once, sorted", () => {
    assert.equal(formatQueueList(["c", "a", "cronjob:x", "a", "b"]), "a\nb\nc\ncronjob:x");
    assert.equal(formatQueueList([]), "");
  });
});
