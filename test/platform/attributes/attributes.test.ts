import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Job } from "../../../src/index.js";
import { Registry } from "../../../src/server/Registry.js";
import { generatedQueueName, workerAttributes } from "../../../src/platform/attributes/attributes.js";
import { ConfigError } from "../../../src/wire/errors.js";

function refused(run: () => unknown, ...mentions: string[]): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error));
    for (const text of mentions) assert.ok(error.message.includes(text), `${error.message}\nshould mention ${text}`);
    return true;
  });
}

describe("worker attributes", () => {
  test("defaults: low urgency, unknown boundary, no category, weight 1, no version", () => {
    class Plain {
      perform(): void {}
    }
    const attributes = workerAttributes(Plain);
    assert.deepEqual(
      { ...attributes },
      {
        workerName: "Plain",
        urgency: "low",
        resourceBoundary: "unknown",
        featureCategory: undefined,
        externalDependencies: false,
        idempotent: false,
        tags: [],
        weight: 1,
        version: undefined,
        queueNamespace: undefined,
        declaredQueue: undefined,
      },
    );
  });

  test("a Job subclass inherits its parent's attributes and may override them", () => {
    class Base extends Job {
      static urgency = "high";
      static featureCategory = "source_code_management";
      perform(): void {}
    }
    class Child extends Base {
      static override urgency = "throttled";
      static override jobName = "Deep::ChildWorker";
      static queueNamespace = "cronjob";
    }
    const child = workerAttributes(Child);
    assert.equal(child.workerName, "Deep::ChildWorker");
    assert.equal(child.urgency, "throttled");
    assert.equal(child.featureCategory, "source_code_management");
    assert.equal(generatedQueueName(child), "cronjob:deep_child");
  });

  test("memory-bound + high urgency fails at registration, naming the class", () => {
    class HeavyExportWorker {
      static urgency = "high";
      static resourceBoundary = "memory";
      perform(): void {}
    }
    refused(
      () => new Registry().register(HeavyExportWorker),
      "job class HeavyExportWorker",
      "memory-bound with high urgency",
    );
  });

  test("bad values fail at registration with the class, the field and what is expected", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ urgency: "urgent" }, 'static urgency must be "high", "low" or "throttled", got "urgent"'],
      [{ resourceBoundary: "gpu" }, 'static resourceBoundary must be "cpu", "memory" or "unknown", got "gpu"'],
      [{ featureCategory: "source code" }, "static featureCategory must be a name of letters, digits and underscores"],
      [{ externalDependencies: "yes" }, "static externalDependencies must be true or false"],
      [{ idempotent: 1 }, "static idempotent must be true or false, got 1"],
      [{ tags: "git_access" }, "static tags must be a list of names"],
      [{ tags: ["ok", "not ok"] }, "static tags must be a list of names"],
      [{ weight: 0 }, "static weight must be a whole number >= 1, got 0"],
      [{ version: 1.5 }, "static version must be a whole number >= 0, got 1.5"],
      [{ queueNamespace: "cron job" }, "static queueNamespace must be"],
    ];
    for (const [fields, message] of cases) {
      const klass = class BadWorker {
        perform(): void {}
      };
      Object.assign(klass, fields);
      refused(() => new Registry().register(klass), "job class BadWorker:", message);
    }
  });

  test("generated queue names follow GitLab's queue_name_from_worker_name", () => {
    const name = (workerName: string, queueNamespace?: string) =>
      generatedQueueName({ ...workerAttributes(class X {}), workerName, queueNamespace });
    assert.equal(name("PostReceive"), "post_receive");
    assert.equal(name("PostReceiveWorker"), "post_receive");
    assert.equal(name("Ci::BuildFinishedWorker", "pipeline_processing"), "pipeline_processing:ci_build_finished");
    assert.equal(
      name("MailScheduler::NotificationServiceWorker", "mail_scheduler"),
      "mail_scheduler:mail_scheduler_notification_service",
    );
    assert.equal(name("HTTPImportWorker"), "http_import");
  });
});
