/**
 * The worker process with routing rules and attributes: a job enqueued by a job is routed by the config
 * file's rules and carries its version; a job module with a forbidden class does not start.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { Client } from "../../../src/client/Client.js";

const handle = useRedis();

test("tsq routes jobs its jobs enqueue by the config's routing_rules; jobVersion reaches perform", async () => {
  const dir = scratchDir("tsq-routing-worker");
  const config = join(dir, "tsq.yml");
  writeFileSync(config, 'routing_rules:\n  - ["resource_boundary=cpu", "cpu_boundary"]\n  - ["*", "default"]\n');
  const worker = startTsq(
    [
      "-r",
      join(ROOT, "dist/test/fixtures/routedJobs.js"),
      "-C",
      config,
      "-q",
      "default",
      "-q",
      "cpu_boundary",
      "-c",
      "2",
    ],
    { REDIS_URL: handle.url },
  );
  const client = new Client({ redis: handle.url });
  const jid = await client.push({ class: "EnqueuerWorker", args: [] });
  await client.close();
  const raw = await eventually(() => handle.redis.lpop("child-ran"), 30_000, "the routed child job ran");
  assert.deepEqual(JSON.parse(raw), { from: jid, queue: "cpu_boundary", jobVersion: 3 });
  assert.equal(await worker.stop(), 0);
});

test("a job module with a memory-bound high-urgency class does not start, naming the class", async () => {
  const worker = startTsq(["-r", join(ROOT, "dist/test/fixtures/forbiddenWorker.js")], { REDIS_URL: handle.url });
  const code = await worker.exited;
  assert.notEqual(code, 0);
  assert.match(worker.output(), /job class HeavyUrgentWorker is memory-bound with high urgency/);
});
