/** `tsqctl workers` and routed `tsqctl push`, run as real processes over the 21-class fixture module. */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { execa } from "execa";
import { freePort, useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { workdirs } from "../helpers/fixtures.js";
import type { WorkerJson } from "../../src/admin/tsqctl/workers.js";
import { giveUpAfter } from "../helpers/timing.js";

const redis = useRedis();
const BIN = join(ROOT, "bin/tsqctl.js");
const FIXTURE = join(ROOT, "dist/test/fixtures/gitlabWorkers.js");
const app = workdirs("tsqctl-workers");

const RULES =
  `require: ${FIXTURE}\n` +
  "routing_rules:\n" +
  '  - ["urgency=high&resource_boundary=cpu", "urgent_cpu"]\n' +
  '  - ["resource_boundary=cpu", "cpu_boundary"]\n' +
  '  - ["queue_namespace=cronjob", ""]\n' +
  '  - ["*", "default"]\n';

async function tsqctl(args: string[], cwd: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  if (!redis.url) throw new Error("the private Redis is not running");
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd,
    env: { REDIS_URL: redis.url },
    reject: false,
    timeout: giveUpAfter(30_000),
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe("tsqctl workers", () => {
  test("--json lists every class with its attributes and routed queue", async () => {
    const run = await tsqctl(["workers", "--json"], app(RULES));
    assert.equal(run.exitCode, 0, run.stderr);
    const list = JSON.parse(run.stdout) as WorkerJson[];
    assert.equal(list.length, 21);
    const byName = new Map(list.map((w) => [w.name, w]));
    assert.deepEqual(byName.get("PostReceiveWorker"), {
      name: "PostReceiveWorker",
      queue: "urgent_cpu",
      generated_queue: "post_receive",
      queue_namespace: null,
      urgency: "high",
      resource_boundary: "cpu",
      feature_category: "source_code_management",
      has_external_dependencies: false,
      idempotent: true,
      tags: ["git_access"],
      weight: 1,
      version: null,
      kill_switch: null,
    });
    assert.equal(byName.get("StuckCiJobsWorker")?.queue, "cpu_boundary");
    assert.equal(byName.get("PruneOldEventsWorker")?.queue, "cronjob:prune_old_events");
    assert.equal(byName.get("MergeRequestMergeabilityCheckWorker")?.queue, "mergeability");
    assert.equal(byName.get("RepositoryImportWorker")?.weight, 2);
    assert.equal(byName.get("NewNoteWorker")?.version, 2);
    assert.equal(byName.get("UntaggedWorker")?.queue, "default");
    assert.deepEqual(
      list.map((w) => w.name),
      [...list.map((w) => w.name)].sort(),
      "sorted by class name",
    );
  });

  test("kill switches set with tsqctl show per class; without Redis they are unknown and the list still prints", async () => {
    const dir = app(RULES);
    assert.equal((await tsqctl(["defer", "NewNoteWorker", "--for", "10m"], dir)).exitCode, 0);
    assert.equal((await tsqctl(["drop", "StuckCiJobsWorker"], dir)).exitCode, 0);
    const run = await tsqctl(["workers", "--json"], dir);
    assert.equal(run.exitCode, 0, run.stderr);
    const byName = new Map((JSON.parse(run.stdout) as WorkerJson[]).map((w) => [w.name, w]));
    assert.equal(byName.get("NewNoteWorker")?.kill_switch, "defer 10 min");
    assert.equal(byName.get("StuckCiJobsWorker")?.kill_switch, "drop");
    assert.equal(byName.get("PostReceiveWorker")?.kill_switch, null);
    const table = await tsqctl(["workers"], dir);
    assert.match(table.stdout, /^StuckCiJobsWorker\s.*\sdrop$/m);

    const down = await tsqctl(["workers", "--json", "--redis-url", `redis://127.0.0.1:${await freePort()}/0`], dir);
    assert.equal(down.exitCode, 0, down.stderr);
    assert.match(down.stderr, /kill switches not shown \(cannot reach Redis/);
    const unknown = JSON.parse(down.stdout) as WorkerJson[];
    assert.equal(unknown.length, 21);
    assert.ok(unknown.every((w) => w.kill_switch === "unknown"));
  });

  test("the table has one row per class under a header", async () => {
    const run = await tsqctl(["workers", "-r", FIXTURE], app());
    assert.equal(run.exitCode, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.equal(lines.length, 22);
    assert.match(
      lines[0]!,
      /^CLASS\s+QUEUE\s+URGENCY\s+BOUNDARY\s+CATEGORY\s+EXT\s+IDEMPOTENT\s+TAGS\s+WEIGHT\s+VERSION\s+SWITCH$/,
    );
    // Without routing rules: its namespace's generated queue.
    assert.ok(
      lines.some((line) =>
        /^StuckCiJobsWorker\s+cronjob:stuck_ci_jobs\s+low\s+cpu\s+continuous_integration\s+no\s+yes\s+-/.test(line),
      ),
      run.stdout,
    );
  });

  test("no module, a bad rule, or a forbidden class: exit 2 with the reason", async () => {
    const none = await tsqctl(["workers"], app());
    assert.equal(none.exitCode, 2);
    assert.match(none.stderr, /no job module: pass -r <path>/);
    const badRule = await tsqctl(["workers"], app(`require: ${FIXTURE}\nrouting_rules:\n  - ["urgency=hihg", "x"]\n`));
    assert.equal(badRule.exitCode, 2);
    assert.match(badRule.stderr, /config\/tsq\.yml: routing_rules\[0\]: the query "urgency=hihg" has urgency="hihg"/);
    const forbidden = await tsqctl(["workers", "-r", join(ROOT, "dist/test/fixtures/forbiddenWorker.js")], app());
    assert.equal(forbidden.exitCode, 2);
    assert.match(forbidden.stderr, /job class HeavyUrgentWorker is memory-bound with high urgency/);
  });
});

describe("tsqctl push with routing rules", () => {
  test("a class with no queue goes where its rule says; -q still wins; the version is in the payload", async () => {
    const cwd = app(RULES);
    const routed = await tsqctl(["push", "NewNoteWorker", "[1]"], cwd);
    assert.equal(routed.exitCode, 0, routed.stderr);
    const [raw] = await redis.redis.lrange("queue:urgent_cpu", 0, -1);
    const job = JSON.parse(raw!) as { jid: string; queue: string; version?: number };
    assert.equal(job.jid, routed.stdout.trim());
    assert.equal(job.queue, "urgent_cpu");
    assert.equal(job.version, 2);

    const manual = await tsqctl(["push", "NewNoteWorker", "[1]", "-q", "manual"], cwd);
    assert.equal(manual.exitCode, 0, manual.stderr);
    assert.equal(await redis.redis.llen("queue:manual"), 1);

    const unknown = await tsqctl(["push", "RubyOnlyWorker", "[]"], cwd);
    assert.equal(unknown.exitCode, 0, unknown.stderr);
    assert.equal(await redis.redis.llen("queue:default"), 1, "a class the module lacks: the * rule");

    const cron = await tsqctl(["push", "StuckCiJobsWorker"], cwd);
    assert.equal(cron.exitCode, 0, cron.stderr);
    assert.equal(await redis.redis.llen("queue:cpu_boundary"), 1, "the cpu rule comes before the namespace rule");
  });

  test("without routing rules the config's job module is not loaded: a push by name stays a push by name", async () => {
    // The module would fail to load (a forbidden class): the push succeeds only because it is not loaded.
    const cwd = app(`require: ${join(ROOT, "dist/test/fixtures/forbiddenWorker.js")}\n`);
    const run = await tsqctl(["push", "HeavyUrgentWorker"], cwd);
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(await redis.redis.llen("queue:default"), 1);
    // Asked for explicitly with -r, it is loaded, and refused.
    const explicit = await tsqctl(
      ["push", "HeavyUrgentWorker", "-r", join(ROOT, "dist/test/fixtures/forbiddenWorker.js")],
      cwd,
    );
    assert.equal(explicit.exitCode, 2);
    assert.match(explicit.stderr, /job class HeavyUrgentWorker is memory-bound with high urgency/);
  });
});
