/**
 * tsq_limit_slots_waiting is each worker's own: a job's Limiter call waiting inside its waitTimeout
 * counts in the metrics of the worker running it, not in another worker's of the same process, and a
 * call outside any job (it holds no worker slot) counts nowhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../../helpers/redis.js";
import { testLauncher } from "../../../helpers/context.js";
import { eventually } from "../../../helpers/tsqProcess.js";
import { JobMetrics } from "../../../../src/metrics/JobMetrics.js";
import { Limiter } from "../../../../src/features/locks/enterprise-rate-limits/index.js";
import { builtinPlugins } from "../../../../src/plugins.js";

const handle = useRedis();

test("a job waiting in a limiter counts in its own worker's tsq_limit_slots_waiting only", async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const holds = new Promise<void>((resolve) => (holding = resolve));
  const limiter = Limiter.concurrent("slots-test", 1, { waitTimeout: 30, redis: handle.redis });
  // Outside any job: takes the limiter's one slot and waits for nothing.
  const outside = limiter.withinLimit(async () => {
    holding();
    await held;
  });
  await holds;
  let ran = false;
  class Waiting {
    async perform() {
      await limiter.withinLimit(() => void (ran = true));
    }
  }
  const waiting = testLauncher(handle.url, [Waiting], {
    queues: [{ name: "waits", weight: 0 }],
    plugins: builtinPlugins(),
  });
  const idle = testLauncher(handle.url, [Waiting], {
    queues: [{ name: "idle", weight: 0 }],
    plugins: builtinPlugins(),
  });
  const metrics = [new JobMetrics(waiting.ctx), new JobMetrics(idle.ctx)];
  t.after(() => metrics.forEach((m) => m.stop()));
  const slots = async (m: JobMetrics) =>
    (await m.snapshot()).find((f) => f.name === "tsq_limit_slots_waiting")?.values[0]?.value;
  assert.deepEqual(await Promise.all(metrics.map(slots)), [0, 0], "the call outside a job holds no slot");

  await Promise.all([waiting.start(), idle.start()]);
  await waiting.ctx.client.push({ class: "Waiting", args: [], queue: "waits" });
  await eventually(async () => (await slots(metrics[0]!)) === 1 || undefined, 10_000, "the job to wait");
  assert.equal(await slots(metrics[1]!), 0, "the other worker's gauge");

  release();
  await outside;
  await eventually(async () => (ran && (await slots(metrics[0]!)) === 0) || undefined, 10_000, "the wait to end");
  await Promise.all([waiting.stop(), idle.stop()]);
});
