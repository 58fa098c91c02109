/**
 * `tsq-cluster` groups as GitLab worker queries, resolved against a 21-class job module
 * (test/fixtures/gitlabWorkers.ts), shown by --list-queues and --dryrun of the real binary.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { workdirs } from "../helpers/fixtures.js";
import { giveUpAfter } from "../helpers/timing.js";

const handle = useRedis();
const FIXTURE = join(ROOT, "dist/test/fixtures/gitlabWorkers.js");
const app = workdirs("tsq-query-groups");

/** GitLab's legacy layout: every worker in its own generated queue. */
const OWN_QUEUES = 'routing_rules:\n  - ["*", ""]\n';

function cluster(args: string[], config?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(ROOT, "bin/tsq-cluster.js"), "-r", FIXTURE, ...args], {
    cwd: app(config),
    env: { ...process.env, REDIS_URL: handle.url },
    encoding: "utf8",
    timeout: giveUpAfter(30_000),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function lines(text: string): string[] {
  return text.trim().split("\n");
}

describe("tsq-cluster query groups", () => {
  test("each query becomes one child working the queues GitLab's matcher selects", () => {
    const run = cluster(["urgency=high&resource_boundary!=cpu", "resource_boundary=cpu", "--dryrun"], OWN_QUEUES);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), [
      'child 0 (group 0 "urgency=high&resource_boundary!=cpu"): queues authorized_projects (weight 1), email_receiver (weight 1), process_commit (weight 1); concurrency 4 (3 queues + 1)',
      'child 1 (group 1 "resource_boundary=cpu"): queues cronjob:stuck_ci_jobs (weight 1), elastic_indexer (weight 1), ' +
        "git_garbage_collect (weight 1), mail_scheduler:mail_scheduler_notification_service (weight 1), " +
        "mergeability (weight 1), new_note (weight 1), pipeline_processing:ci_build_finished (weight 1), " +
        "pipeline_processing:pipeline_process (weight 1), post_receive (weight 1); concurrency 10 (9 queues + 1)",
    ]);
  });

  test("precedence: & binds tighter than |; --list-queues prints the union", () => {
    const run = cluster(["feature_category=importers|urgency=high&resource_boundary=cpu", "--list-queues"], OWN_QUEUES);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), [
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "project_export",
      "repository_import",
    ]);
  });

  test("with routing rules a query works the routed queues; '*' and plain groups keep their meaning", () => {
    const rules =
      'routing_rules:\n  - ["urgency=high", "urgent"]\n  - ["resource_boundary=cpu", "cpu_boundary"]\n  - ["*", "default"]\n';
    const run = cluster(
      ["urgency=high&resource_boundary!=cpu", "resource_boundary=cpu", "*", "critical,low", "--dryrun"],
      rules,
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), [
      'child 0 (group 0 "urgency=high&resource_boundary!=cpu"): queues urgent (weight 1); concurrency 2 (1 queue + 1)',
      // cpu-bound high-urgency classes are routed to `urgent` by the first rule; `mergeability` is declared.
      'child 1 (group 1 "resource_boundary=cpu"): queues cpu_boundary (weight 1), mergeability (weight 1), urgent (weight 1); concurrency 4 (3 queues + 1)',
      'child 2 (group 2 "*"): queues cpu_boundary (weight 1), default (weight 1), mergeability (weight 1), urgent (weight 1); concurrency 5 (4 queues + 1)',
      'child 3 (group 3 "critical,low"): queues critical (weight 1), low (weight 1); concurrency 3 (2 queues + 1)',
    ]);
  });

  test("without routing rules classes go where they always did: declared, namespace, or default", () => {
    const run = cluster(["queue_namespace=cronjob", "urgency=high", "--dryrun"]);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), [
      'child 0 (group 0 "queue_namespace=cronjob"): queues cronjob:prune_old_events (weight 1), cronjob:remove_expired_members (weight 1), cronjob:stuck_ci_jobs (weight 1); concurrency 4 (3 queues + 1)',
      'child 1 (group 1 "urgency=high"): queues default (weight 1), pipeline_processing:ci_build_finished (weight 1), pipeline_processing:pipeline_process (weight 1); concurrency 4 (3 queues + 1)',
    ]);
  });

  test("a malformed query exits 2 naming the group and the bad token; so does a query matching nothing", () => {
    const bad = cluster(["urgency=high", "urgency=hihg&resource_boundary=cpu", "--dryrun"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /queue group 1: the query "urgency=hihg&resource_boundary=cpu" has urgency="hihg"/);
    const none = cluster(["feature_category=no_such_thing", "--dryrun"]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /queue group 0 \("feature_category=no_such_thing"\) matches no job class/);
  });

  test("a class breaking GitLab's rules stops the plan, naming the class", () => {
    const run = spawnSync(
      process.execPath,
      [join(ROOT, "bin/tsq-cluster.js"), "-r", join(ROOT, "dist/test/fixtures/forbiddenWorker.js"), "*", "--dryrun"],
      { cwd: app(), env: { ...process.env, REDIS_URL: handle.url }, encoding: "utf8", timeout: 30_000 },
    );
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /job class HeavyUrgentWorker is memory-bound with high urgency/);
  });
});
