/** Routing rules at push time (performAsync, Client.push) and the job version, against a real Redis. */
import { describe, test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Job } from "../../../src/client/Job.js";
import { Client } from "../../../src/client/Client.js";
import { configureClient, closeDefaultClient } from "../../../src/client/defaultClient.js";
import { WorkerRouter, configureRouting, type RoutingRule } from "../../../src/platform/attributes/WorkerRouter.js";
import { Registry } from "../../../src/server/Registry.js";
import { ConfigError } from "../../../src/wire/errors.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";

const redis = useRedis();
const FIXTURE = join(fileURLToPath(new URL(".", import.meta.url)), "../../fixtures/gitlabWorkers.js");

const RULES: RoutingRule[] = [
  ["urgency=high&resource_boundary=cpu", "urgent_cpu"],
  ["resource_boundary=cpu", "cpu_boundary"],
  ["queue_namespace=cronjob", null],
  ["feature_category=importers", ""],
  ["*", "default"],
];

beforeEach(() => {
  if (!redis.url) throw new Error("the private Redis is not running");
  configureClient({ redis: redis.url });
});
afterEach(async () => {
  configureRouting([]);
  await closeDefaultClient();
});

async function queueOf(jid: string | null): Promise<string> {
  for (const key of await redis.redis.keys("queue:*")) {
    for (const raw of await redis.redis.lrange(key, 0, -1)) {
      const job = JSON.parse(raw) as { jid: string; queue: string };
      if (job.jid === jid) {
        assert.equal(key, `queue:${job.queue}`, "the payload's queue is the list it is in");
        return job.queue;
      }
    }
  }
  throw new Error(`job ${jid} is in no queue`);
}

describe("routing rules", () => {
  test("every fixture class is routed by the first matching rule; a declared queue is never routed", async () => {
    const registry = new Registry();
    await registry.load(FIXTURE);
    const router = new WorkerRouter(RULES);
    const routed = Object.fromEntries(registry.names().map((n) => [n, router.queueOf(registry.attributes(n)!)]));
    assert.deepEqual(routed, {
      AuthorizedProjectsWorker: "default",
      BuildHooksWorker: "default",
      ChatNotificationWorker: "default",
      "Ci::BuildFinishedWorker": "urgent_cpu",
      ElasticIndexerWorker: "cpu_boundary",
      EmailReceiverWorker: "default",
      ExportCsvWorker: "default",
      GitGarbageCollectWorker: "cpu_boundary",
      "MailScheduler::NotificationServiceWorker": "cpu_boundary",
      MergeRequestMergeabilityCheckWorker: "mergeability",
      NewNoteWorker: "urgent_cpu",
      PipelineProcessWorker: "urgent_cpu",
      PostReceiveWorker: "urgent_cpu",
      ProcessCommitWorker: "default",
      ProjectExportWorker: "project_export",
      PruneOldEventsWorker: "cronjob:prune_old_events",
      RemoveExpiredMembersWorker: "cronjob:remove_expired_members",
      RepositoryImportWorker: "repository_import",
      StuckCiJobsWorker: "cpu_boundary",
      UntaggedWorker: "default",
      WebHookWorker: "default",
    });
    // Without rules: the declared queue, else the namespace's generated name, else `default`.
    const plain = new WorkerRouter([]);
    assert.equal(plain.queueOf(registry.attributes("PostReceiveWorker")!), "default");
    assert.equal(plain.queueOf(registry.attributes("StuckCiJobsWorker")!), "cronjob:stuck_ci_jobs");
    assert.equal(plain.queueOf(registry.attributes("MergeRequestMergeabilityCheckWorker")!), "mergeability");
  });

  test("performAsync routes a class with no queue; set({queue}), options.queue and push's queue win", async () => {
    class HotCpuWorker extends Job {
      static urgency = "high";
      static resourceBoundary = "cpu";
      perform(): void {}
    }
    class PinnedWorker extends Job {
      static override options = { queue: "pinned" };
      static resourceBoundary = "cpu";
      perform(): void {}
    }
    configureRouting(RULES);
    assert.equal(await queueOf(await HotCpuWorker.performAsync()), "urgent_cpu");
    assert.equal(await queueOf(await HotCpuWorker.set({ queue: "manual" }).performAsync()), "manual");
    assert.equal(await queueOf(await PinnedWorker.performAsync()), "pinned");
    const client = new Client({ redis: redis.redis });
    assert.equal(await queueOf(await client.push({ class: HotCpuWorker, args: [] })), "urgent_cpu");
    assert.equal(await queueOf(await client.push({ class: HotCpuWorker, args: [], queue: "given" })), "given");
    // A class known only by name has default attributes: the `*` rule.
    assert.equal(await queueOf(await client.push({ class: "RubyOnlyWorker", args: [] })), "default");
    // A client's own router beats the process's.
    const own = new Client({ redis: redis.redis, router: new WorkerRouter([["*", "elsewhere"]]) });
    assert.equal(await queueOf(await own.push({ class: HotCpuWorker, args: [] })), "elsewhere");
  });

  test("without rules nothing changes: default, or the namespace's generated queue", async () => {
    class PlainWorker extends Job {
      static urgency = "high";
      perform(): void {}
    }
    class NightlyCleanupWorker extends Job {
      static queueNamespace = "cronjob";
      perform(): void {}
    }
    assert.equal(await queueOf(await PlainWorker.performAsync()), "default");
    assert.equal(await queueOf(await NightlyCleanupWorker.performAsync()), "cronjob:nightly_cleanup");
  });

  test("a bad rule fails when the rules are set, naming the rule and the bad token", () => {
    assert.throws(
      () =>
        configureRouting([
          ["*", "default"],
          ["urgency=hi", "x"],
        ]),
      (e: unknown) => e instanceof ConfigError && e.message.startsWith('routing_rules[1]: the query "urgency=hi"'),
    );
    assert.throws(
      () => new WorkerRouter([["*", "two words"]]),
      (e: unknown) => e instanceof ConfigError && e.message.includes('routing_rules[0]: the queue "two words"'),
    );
  });
});

describe("job version", () => {
  test("static version goes into the payload's `version` and comes back as this.jobVersion", async () => {
    const seen: (number | undefined)[] = [];
    class VersionedWorker extends Job {
      static version = 2;
      perform(): void {
        seen.push(this.jobVersion);
      }
    }
    class UnversionedWorker extends Job {
      perform(): void {
        seen.push(this.jobVersion);
      }
    }
    const jid = await VersionedWorker.performAsync();
    const [raw] = await redis.redis.lrange("queue:default", 0, -1);
    const payload = JSON.parse(raw!) as { jid: string; version?: number };
    assert.equal(payload.jid, jid);
    assert.equal(payload.version, 2, "GitLab's job version field");
    await UnversionedWorker.performAsync();
    const launcher = testLauncher(redis.url, [VersionedWorker, UnversionedWorker]);
    await launcher.start();
    const deadline = Date.now() + 20_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await launcher.stop();
    assert.deepEqual(seen.sort(), [2, undefined]);
  });
});
