import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "../../../src/server/Registry.js";
import {
  workerAttributes,
  generatedQueueName,
  type WorkerAttributes,
} from "../../../src/platform/attributes/attributes.js";
import { matches, parseQuery } from "../../../src/platform/attributes/query.js";
import { ConfigError } from "../../../src/wire/errors.js";

const FIXTURE = join(fileURLToPath(new URL(".", import.meta.url)), "../../fixtures/gitlabWorkers.js");

async function fixtureWorkers(): Promise<WorkerAttributes[]> {
  const registry = new Registry();
  const names = await registry.load(FIXTURE);
  return names.map((name) => workerAttributes(registry.get(name)!, name));
}

/** GitLab's queue names (all_queues.yml `name`) of the workers a query selects, sorted. */
function selected(workers: WorkerAttributes[], query: string): string[] {
  const parsed = parseQuery(query);
  return workers
    .filter((worker) => matches(parsed, worker))
    .map((worker) => worker.declaredQueue ?? generatedQueueName(worker))
    .sort();
}

const ALL = [
  "authorized_projects",
  "chat_notification",
  "cronjob:prune_old_events",
  "cronjob:remove_expired_members",
  "cronjob:stuck_ci_jobs",
  "elastic_indexer",
  "email_receiver",
  "export_csv",
  "git_garbage_collect",
  "mail_scheduler:mail_scheduler_notification_service",
  "mergeability",
  "new_note",
  "pipeline_hooks:build_hooks",
  "pipeline_processing:ci_build_finished",
  "pipeline_processing:pipeline_process",
  "post_receive",
  "process_commit",
  "project_export",
  "repository_import",
  "untagged",
  "web_hook",
];

/** Each query with the queues GitLab's WorkerMatcher selects from the fixture (see its table). */
const CASES: [query: string, queues: string[]][] = [
  ["*", ALL],
  [" * ", ALL],
  [
    "urgency=high",
    [
      "authorized_projects",
      "email_receiver",
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "process_commit",
    ],
  ],
  ["urgency=high&resource_boundary!=cpu", ["authorized_projects", "email_receiver", "process_commit"]],
  [
    "resource_boundary=cpu",
    [
      "cronjob:stuck_ci_jobs",
      "elastic_indexer",
      "git_garbage_collect",
      "mail_scheduler:mail_scheduler_notification_service",
      "mergeability",
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
    ],
  ],
  ["urgency=throttled,low&resource_boundary=memory", ["export_csv", "project_export", "repository_import"]],
  // `&` binds tighter than `|`, whichever side the OR is on.
  [
    "urgency=high&resource_boundary=cpu|feature_category=importers",
    [
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "project_export",
      "repository_import",
    ],
  ],
  [
    "feature_category=importers|urgency=high&resource_boundary=cpu",
    [
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "project_export",
      "repository_import",
    ],
  ],
  [
    "urgency=low|urgency=throttled&has_external_dependencies=true",
    [
      "chat_notification",
      "cronjob:prune_old_events",
      "cronjob:remove_expired_members",
      "cronjob:stuck_ci_jobs",
      "elastic_indexer",
      "git_garbage_collect",
      "mail_scheduler:mail_scheduler_notification_service",
      "mergeability",
      "pipeline_hooks:build_hooks",
      "project_export",
      "repository_import",
      "untagged",
      "web_hook",
    ],
  ],
  [
    "has_external_dependencies=true",
    [
      "chat_notification",
      "elastic_indexer",
      "email_receiver",
      "pipeline_hooks:build_hooks",
      "repository_import",
      "web_hook",
    ],
  ],
  [
    "has_external_dependencies=false&urgency=high",
    [
      "authorized_projects",
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "process_commit",
    ],
  ],
  // tags: set semantics; `,` is "any of", `&` of two tag terms is "both".
  ["tags=needs_own_queue", ["new_note", "web_hook"]],
  ["tags=exclude_from_kubernetes,git_access", ["git_garbage_collect", "post_receive", "project_export"]],
  [
    "tags!=exclude_from_kubernetes&resource_boundary=cpu",
    [
      "cronjob:stuck_ci_jobs",
      "elastic_indexer",
      "mail_scheduler:mail_scheduler_notification_service",
      "mergeability",
      "new_note",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
    ],
  ],
  ["tags=exclude_from_kubernetes&tags=exclude_from_gitlab_com", ["git_garbage_collect"]],
  ["queue_namespace=cronjob", ["cronjob:prune_old_events", "cronjob:remove_expired_members", "cronjob:stuck_ci_jobs"]],
  // `!=` negates the whole value set: neither namespace (workers without one count as "not in it").
  [
    "queue_namespace!=cronjob,pipeline_processing&feature_category=continuous_integration",
    ["pipeline_hooks:build_hooks"],
  ],
  ["worker_name=PostReceiveWorker,Ci::BuildFinishedWorker", ["pipeline_processing:ci_build_finished", "post_receive"]],
  ["name=mergeability,post_receive", ["mergeability", "post_receive"]],
  ["name=cronjob:stuck_ci_jobs", ["cronjob:stuck_ci_jobs"]],
  [
    "feature_category!=team_planning&urgency!=low",
    [
      "authorized_projects",
      "elastic_indexer",
      "email_receiver",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "post_receive",
      "process_commit",
      "repository_import",
    ],
  ],
  [
    "feature_category=continuous_integration&urgency=high|queue_namespace=cronjob&resource_boundary=cpu|worker_name=UntaggedWorker",
    [
      "cronjob:stuck_ci_jobs",
      "pipeline_processing:ci_build_finished",
      "pipeline_processing:pipeline_process",
      "untagged",
    ],
  ],
  // A worker without a feature category is "not source_code_management".
  ["feature_category!=source_code_management", ALL.filter((q) => q !== "post_receive" && q !== "process_commit")],
  [
    "resource_boundary=unknown",
    [
      "authorized_projects",
      "chat_notification",
      "cronjob:prune_old_events",
      "cronjob:remove_expired_members",
      "email_receiver",
      "pipeline_hooks:build_hooks",
      "process_commit",
      "untagged",
      "web_hook",
    ],
  ],
  ["urgency=high,low,throttled", ALL],
  ["feature_category=no_such_category", []],
];

describe("worker queries over a 21-class job module", () => {
  test("the fixture module registers 21 classes, Job subclasses and plain classes alike", async () => {
    const workers = await fixtureWorkers();
    assert.equal(workers.length, 21);
    assert.deepEqual(workers.map((w) => w.declaredQueue ?? generatedQueueName(w)).sort(), ALL);
  });

  for (const [query, queues] of CASES) {
    test(`${query} → ${queues.length} queues`, async () => {
      assert.deepEqual(selected(await fixtureWorkers(), query), queues);
    });
  }
});

/** Malformed queries: each a ConfigError whose message contains the bad token. */
const ERRORS: [query: string, mentions: string][] = [
  ["", "is empty"],
  ["urgency=high&", 'empty term around "&"'],
  ["urgency=high||urgency=low", 'empty clause around "|"'],
  ["urgency==high", '"urgency==high"'],
  ["urgency = high", '"urgency = high" (a term has no spaces inside)'],
  ["urgency=hihg", 'urgency="hihg"'],
  ["resource_boundary=gpu,cpu", 'resource_boundary="gpu"'],
  ["colour=red", 'unknown attribute "colour"'],
  ["*|urgency=high", '"*" must stand alone'],
  ["urgency=high,,low", "empty value"],
  ["has_external_dependencies=yes", 'has_external_dependencies="yes"'],
  ["feature_category=source-code", '"feature_category=source-code"'],
  ["urgency", '"urgency" (expected attribute=value'],
];

describe("malformed queries", () => {
  for (const [query, mentions] of ERRORS) {
    test(`${JSON.stringify(query)} is refused, naming ${mentions}`, () => {
      assert.throws(
        () => parseQuery(query, "queue group 0"),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.ok(error.message.startsWith("queue group 0: the query"), error.message);
          assert.ok(error.message.includes(mentions), `${error.message}\nshould mention ${mentions}`);
          return true;
        },
      );
    });
  }
});
