import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  formatPlan,
  formatQueueList,
  parseGroup,
  planChildren,
  queueEntries,
  resolveGroups,
} from "../../src/cluster/groups.js";
import { childConcurrency } from "../../src/cluster/concurrency.js";
import type { QueueSpec } from "../../src/platform/config/options.js";
import { ConfigError } from "../../src/wire/errors.js";

const known = ["a", "b", "c", "d", "cronjob:x", "cronjob:y"];

/** Queues of weight 1 each (GitLab's tally: random order per fetch). */
function ones(...names: string[]): QueueSpec[] {
  return names.map((name) => ({ name, weight: 1 }));
}

/** Sized as GitLab 16.x does by default (-m 20, --min-concurrency 0). */
const gitlab = {
  processesPerGroup: 1,
  concurrency: (queues: readonly QueueSpec[]) =>
    childConcurrency(queueEntries(queues), { fixed: undefined, min: 0, max: 20 }),
};

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
      ones("a", "b"),
      ones("c"),
      ones("a", "b", "c", "d", "cronjob:x", "cronjob:y"),
    ]);
  });

  test("a bare name selects its namespace, and itself even when not known", () => {
    assert.deepEqual(resolveGroups(["cronjob"], known), [ones("cronjob", "cronjob:x", "cronjob:y")]);
    assert.deepEqual(resolveGroups(["cronjob:x"], known), [ones("cronjob:x")]);
    assert.deepEqual(resolveGroups(["new"], []), [ones("new")]);
    // A prefix is not a namespace: "cron" does not select "cronjob:x".
    assert.deepEqual(resolveGroups(["cron"], known), [ones("cron")]);
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

  test('"*" and a name select a queue once (weight 1); naming it twice still weighs it', () => {
    assert.deepEqual(resolveGroups(["c,*"], known), [ones("c", "a", "b", "d", "cronjob:x", "cronjob:y")]);
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
    assert.deepEqual(resolveGroups([" a , b "], known), [ones("a", "b")]);
    assert.deepEqual(resolveGroups(["*"], ["a", "a", "b"]), [ones("a", "b")]);
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
    const plan = planChildren(groups, { processesPerGroup: 1, concurrency: () => ({ slots: 10 }) }, labels);
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
    const plan = planChildren(groups, { processesPerGroup: 2, concurrency: () => ({ slots: 5 }) }, labels);
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
    assert.throws(() => planChildren(groups, gitlab, ["a,b"]), RangeError);
    assert.throws(() => planChildren(groups, { ...gitlab, processesPerGroup: 0 }, labels), RangeError);
  });
});

describe("formatting", () => {
  test("--dryrun: one line per child, with its weights and its concurrency and why", () => {
    const plan = planChildren(resolveGroups(["a,b", "a,a,b"], known), gitlab, ["a,b", "a,a,b"]);
    assert.equal(
      formatPlan(plan),
      'child 0 (group 0 "a,b"): queues a (weight 1), b (weight 1); concurrency 3 (2 queues + 1)\n' +
        'child 1 (group 1 "a,a,b"): queues a (weight 2), b (weight 1); concurrency 4 (3 queues + 1)',
    );
  });

  test("--strict-order: weights dropped after sizing, so the listed order holds", () => {
    const plan = planChildren(resolveGroups(["a,a,b"], known), { ...gitlab, strictOrder: true }, ["a,a,b"]);
    assert.equal(formatPlan(plan), 'child 0 (group 0 "a,a,b"): queues a, b; concurrency 4 (3 queues + 1)');
  });

  test("--list-queues: each group's queues once, sorted, a blank line between groups", () => {
    assert.equal(formatQueueList([["c", "a", "cronjob:x", "a", "b"]]), "a\nb\nc\ncronjob:x");
    assert.equal(formatQueueList([["b", "a"], ["c"], ["d", "a"]]), "a\nb\n\nc\n\na\nd");
    assert.equal(formatQueueList([]), "");
  });
});
