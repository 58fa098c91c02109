/**
 * Two workers in one process share nothing but the process: each has its own plug-ins, its own routing
 * rules and its own class of a name both register, and its own side tables (paused queues, the
 * concurrency limiter). Before, the last class registered under a name won for every worker's client,
 * and the limiter, kill switches and paused queues lived in module-level tables.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { Worker } from "../../src/library/Worker.js";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";
import { jobClassOf } from "../../src/client/jobClasses.js";
import { definePlugin, type Plugin } from "../../src/server/plugin.js";
import { pausedQueuesFor } from "../../src/server/fetch/PausedQueues.js";
import { limiterFor } from "../../src/features/locks/gitlab-concurrency-limits/plugin.js";
import { parsePayload, type JobPayload } from "../../src/wire/payload.js";
import type { Next } from "../../src/platform/Chain.js";
import { eventually } from "../helpers/tsqProcess.js";

const handle = useRedis();

const ran: string[] = [];

/** Enqueued by both classes without a queue: each worker's routing rules choose where it goes. */
class FollowUpJob extends Job {
  perform(_n: number): void {}
}

class SameJobA extends Job {
  static override jobName = "SameJob";
  async perform(n: number): Promise<void> {
    ran.push(`A ${n}`);
    await FollowUpJob.performAsync(n);
  }
}

class SameJobB extends Job {
  static override jobName = "SameJob";
  async perform(n: number): Promise<void> {
    ran.push(`B ${n}`);
    await FollowUpJob.performAsync(n);
  }
}

/** A plug-in that stamps its tag on every push and records the class each job was resolved to, both sides. */
function tagger(tag: string, seen: string[]): Plugin {
  return definePlugin({
    name: `tagger-${tag}`,
    client: () => ({
      stamp: (job) => void (job.tagged_by = tag),
      middleware: async (_c: string, job: JobPayload, _q: string, _r: unknown, next: Next) => {
        seen.push(`push ${job.class} as ${(jobClassOf(job) as { name?: string } | undefined)?.name ?? "unknown"}`);
        await next();
      },
    }),
    server: () => ({
      around: async (run, instance, job) => {
        seen.push(`run ${job.class} as ${instance.constructor.name}`);
        return run();
      },
    }),
  });
}

test("two workers in one process: their own plug-ins, routing and class of the same name", async (t) => {
  const seenA: string[] = [];
  const seenB: string[] = [];
  const a = new Worker({
    redis: handle.url,
    jobs: [SameJobA],
    queues: ["a"],
    plugins: [tagger("A", seenA)],
    options: { fetchTimeout: 1, routingRules: [["*", "after_a"]] },
  });
  const b = new Worker({
    redis: handle.url,
    jobs: [SameJobB],
    queues: ["b"],
    plugins: [tagger("B", seenB)],
    options: { fetchTimeout: 1, routingRules: [["*", "after_b"]] },
  });
  t.after(() => Promise.all([a.stop(), b.stop()]));

  // Side tables are the worker's own, on its context.
  const ctxA = a.launcher.ctx;
  const ctxB = b.launcher.ctx;
  assert.notEqual(pausedQueuesFor(ctxA, ctxA.redis, ctxA.logger), pausedQueuesFor(ctxB, ctxB.redis, ctxB.logger));
  assert.equal(pausedQueuesFor(ctxA, ctxA.redis, ctxA.logger), pausedQueuesFor(ctxA, ctxA.redis, ctxA.logger));
  assert.notEqual(limiterFor(ctxA), limiterFor(ctxB));

  // A push by name through each worker's client finds that worker's class (as the poller's re-push does).
  await ctxA.client.push({ class: "SameJob", queue: "a", args: [1] });
  await ctxB.client.push({ class: "SameJob", queue: "b", args: [2] });
  assert.deepEqual(seenA.splice(0), ["push SameJob as SameJobA"]);
  assert.deepEqual(seenB.splice(0), ["push SameJob as SameJobB"]);
  // A plain client of the app knows no registry: its push by name is of a class known by name only.
  const app = new Client({ redis: handle.url, plugins: [tagger("app", [])] });
  t.after(() => app.close());
  await app.push({ class: "SameJob", queue: "b", args: [3] });

  await Promise.all([a.start(), b.start()]);
  const followUps = async (queue: string) =>
    (await handle.redis.lrange(`queue:${queue}`, 0, -1)).map((json) => parsePayload(json));
  await eventually(
    async () => (await followUps("after_a")).length === 1 && (await followUps("after_b")).length === 2,
    20_000,
    "each worker's follow-ups in its routed queue",
    20,
  );

  assert.deepEqual(ran.sort(), ["A 1", "B 2", "B 3"], "each worker ran its own class of the name");
  assert.deepEqual(seenA, ["run SameJob as SameJobA", "push FollowUpJob as FollowUpJob"]);
  assert.deepEqual(seenB.sort(), [
    "push FollowUpJob as FollowUpJob",
    "push FollowUpJob as FollowUpJob",
    "run SameJob as SameJobB",
    "run SameJob as SameJobB",
  ]);
  // Each job's follow-up went by its own worker's rules, stamped by its own worker's plug-in only.
  const [fromA] = await followUps("after_a");
  assert.deepEqual([fromA!.args, fromA!.tagged_by], [[1], "A"]);
  assert.deepEqual((await followUps("after_b")).map((job) => [job.args[0], job.tagged_by]).sort(), [
    [2, "B"],
    [3, "B"],
  ]);
});
