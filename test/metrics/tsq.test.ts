/** `tsq --metrics-port`: one real worker process serves its own job metrics, the Redis gauges and health. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";
import { parseExposition, total } from "./promText.js";
import { request } from "./http.js";
import { withinDeadline } from "../helpers/timing.js";

const handle = useRedis();

test("tsq serves /metrics, /healthz and /readyz; /healthz is 503 while Redis is down", async (t) => {
  const dir = scratchDir("tsq-metrics-cfg");
  writeFileSync(join(dir, "tsq.yml"), "heartbeat_interval: 1\n");
  const port = await freePort();
  const proc = startTsq(
    ["-r", TEST_JOBS, "-c", "5", "-t", "2", "-C", join(dir, "tsq.yml"), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
  );
  t.after(async () => {
    await proc.stop(10_000);
  });
  await eventually(
    async () => (await request(port, "/readyz").catch(() => undefined))?.status === 200,
    20_000,
    `/readyz 200; output:\n${proc.output().slice(-2000)}`,
  );
  assert.equal((await request(port, "/healthz")).status, 200);
  assert.equal((await request(port, "/elsewhere")).status, 404);

  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 40 }, (_, i) => [i]),
  );
  await pushJobs(
    handle.url,
    "FarRetryFailJob",
    Array.from({ length: 5 }, () => []),
  );
  const families = await eventually(
    async () => {
      const reply = await request(port, "/metrics");
      const parsed = parseExposition(reply.body);
      return total(parsed, "tsq_jobs_completion_seconds_count") === 45 ? parsed : undefined;
    },
    20_000,
    "45 completions",
  );
  assert.equal(total(families, "tsq_jobs_completion_seconds_count", { class: "CountJob", job_status: "done" }), 40);
  assert.equal(total(families, "tsq_jobs_retried_total", { class: "FarRetryFailJob" }), 5);
  assert.equal(total(families, "tsq_queue_size", { queue: "default" }), 0);
  assert.equal(total(families, "tsq_retry_size"), 5);
  assert.equal(total(families, "tsq_processes"), 1);
  for (const name of ["tsq_overrated", "tsq_durable_sleeping", "tsq_limit_slots_waiting"])
    assert.ok(families.get(name), `${name} from its plug-in`);
  assert.ok(
    families.get("process_cpu_seconds_total")?.samples.every((s) => s.labels.child === undefined),
    "no child label on a single process",
  );
  assert.equal(families.get("tsq_cluster_children"), undefined, "no supervisor metrics without a supervisor");

  // Redis down for 3 s: /healthz says so within about 1 s, /metrics still answers (without the Redis gauges).
  const back = handle.restart(3000);
  await new Promise((r) => setTimeout(r, 300));
  const health = await request(port, "/healthz");
  assert.equal(health.status, 503);
  withinDeadline(health.ms, 1000, "/healthz with Redis down");
  const during = await request(port, "/metrics");
  assert.equal(during.status, 200);
  withinDeadline(during.ms, 1000, "/metrics without its Redis gauges (REDIS_WAIT_MS)");
  const withoutRedis = parseExposition(during.body);
  assert.equal(withoutRedis.get("tsq_queue_size"), undefined);
  assert.equal(total(withoutRedis, "tsq_jobs_completion_seconds_count"), 45);
  await back;
  await eventually(
    async () => (await request(port, "/healthz")).status === 200,
    20_000,
    "/healthz 200 once Redis is back",
  );
});
