/**
 * Kill switches with real workers: `tsqctl defer` makes a worker re-schedule the class's jobs with
 * GitLab's `deferred`, `deferred_by`, `deferred_count` instead of running them, `tsqctl resume` lets
 * them run, `tsqctl drop` discards them with a log line naming the jid; both are counted in /metrics.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tsqctl as runTsqctl } from "../../../helpers/tsqctl.js";
import { Client } from "../../../../src/client/Client.js";
import { KILL_SWITCHES, SCHEDULE, queueKey } from "../../../../src/wire/keys.js";
import { parseSwitch } from "../../../../src/features/flow/kill-switches/switches.js";
import { parseDelay } from "../../../../src/admin/tsqctl/switches.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { scratchDir } from "../../../helpers/fixtures.js";
import { TEST_JOBS, eventually, startTsq } from "../../../helpers/tsqProcess.js";

const redis = useRedis();

async function tsqctl(...args: string[]): Promise<string> {
  const run = await runTsqctl(args, { REDIS_URL: redis.url });
  assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  return String(run.stdout);
}

/** Polls and switch reads fast, so the test does not wait on the 5 s / 2 s defaults. */
function fastConfig(): string {
  const path = join(scratchDir("tsq-switch"), "tsq.yml");
  writeFileSync(path, "poll_interval_average: 1\nkill_switch_refresh_interval: 0.5\n");
  return path;
}

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes('class="RecordJob"'));
  return line ? Number(line.split(" ").pop()) : 0;
}

test("defer re-schedules with GitLab's fields and does not run; resume runs; drop discards with a log line", async (t) => {
  assert.ok(redis.url);
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());
  const config = fastConfig();

  assert.match(await tsqctl("defer", "RecordJob", "--for", "1s"), /RecordJob: jobs deferred by 1\.00 s each/);
  const listed = JSON.parse(await tsqctl("switches", "--json")) as Record<string, unknown>[];
  assert.deepEqual(
    listed.map(({ class: klass, action, delay }) => ({ klass, action, delay })),
    [{ klass: "RecordJob", action: "defer", delay: 1 }],
  );
  assert.match(await tsqctl("switches"), /RecordJob\s+defer\s+1\.00 s/);

  const jid = await client.push({ class: "RecordJob", args: ["deferred"] });
  const port = await freePort();
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "-C", config, "--metrics-port", String(port)], {
    REDIS_URL: redis.url,
  });
  // Deferred at least twice: re-scheduled, moved back by the poller, deferred again.
  const second = await worker.waitForLine((l) => l.job_status === "deferred" && l.deferred_count === 2, 30_000);
  assert.equal(second.jid, jid);
  assert.equal(second.job_deferred_by, "kill_switch");
  assert.equal(await redis.redis.llen("ran"), 0, "a deferred job does not run");
  const scheduled = await eventually(
    async () => (await redis.redis.zrange(SCHEDULE, 0, -1))[0],
    30_000,
    "the deferred job is in the schedule",
  );
  const payload = JSON.parse(scheduled) as Record<string, unknown>;
  assert.equal(payload.jid, jid);
  assert.equal(payload.deferred, true);
  assert.equal(payload.deferred_by, "kill_switch");
  assert.ok((payload.deferred_count as number) >= 2);
  assert.ok((await metric(port, "tsq_jobs_deferred_total")) >= 2);

  assert.match(await tsqctl("resume", "RecordJob"), /RecordJob: resumed/);
  const ran = await eventually(() => redis.redis.lpop("ran"), 30_000, `the job ran after resume:\n${worker.output()}`);
  assert.equal((JSON.parse(ran) as { jid: string }).jid, jid);
  assert.equal(await redis.redis.exists(KILL_SWITCHES), 0);
  assert.match(await tsqctl("switches"), /no kill switches set/);

  assert.match(await tsqctl("drop", "RecordJob"), /RecordJob: jobs dropped/);
  // The worker reads switches again within 0.5 s; jobs pushed until one is dropped prove it applies.
  const dropped = await eventually(
    async () => {
      const next = await client.push({ class: "RecordJob", args: ["maybe dropped"] });
      const line = await worker
        .waitForLine((l) => l.job_status === "dropped" && l.jid === next, 2_000)
        .catch(() => undefined);
      return line ? next : undefined;
    },
    30_000,
    "a job is dropped",
  );
  const line = worker.lines.find((l) => l.job_status === "dropped" && l.jid === dropped)!;
  assert.match(line.msg as string, new RegExp(`job ${dropped} dropped by a kill switch`));
  const runs = (await redis.redis.lrange("ran", 0, -1)).map((r) => (JSON.parse(r) as { jid: string }).jid);
  assert.ok(!runs.includes(dropped), "a dropped job does not run");
  assert.equal(await redis.redis.llen(queueKey("default")), 0);
  assert.equal(await redis.redis.zcard(SCHEDULE), 0, "a dropped job is not re-scheduled");
  assert.equal(await metric(port, "tsq_jobs_dropped_total"), 1);
  await worker.stop();
});

test("reliable fetch: a deferred ActiveJob (matched by its wrapped class) leaves no private queue behind", async () => {
  assert.ok(redis.url);
  await tsqctl("defer", "RecordJob", "--for", "1h");
  const wrapper = JSON.stringify({
    class: "Sidekiq::ActiveJob::Wrapper",
    wrapped: "RecordJob",
    queue: "default",
    jid: "0123456789abcdef0123aaaa",
    args: [{ job_class: "RecordJob", job_id: "x", arguments: [] }],
    deferred_count: 4,
  });
  await redis.redis.lpush(queueKey("default"), wrapper);
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "--fetch", "reliable", "-C", fastConfig()], {
    REDIS_URL: redis.url,
  });
  const line = await worker.waitForLine((l) => l.job_status === "deferred", 30_000);
  assert.equal(line.jid, "0123456789abcdef0123aaaa");
  const [stored, score] = await eventually(
    async () => {
      const found = await redis.redis.zrange(SCHEDULE, 0, -1, "WITHSCORES");
      return found.length === 2 ? found : undefined;
    },
    30_000,
    "the job is in the schedule",
  );
  const payload = JSON.parse(stored!) as Record<string, unknown>;
  assert.equal(payload.deferred_count, 5, "deferred_count counts on from the stored value");
  assert.equal(payload.wrapped, "RecordJob");
  assert.ok(Number(score) > Date.now() / 1000 + 3000, "pushed back by --for 1h");
  await eventually(
    async () => (await redis.redis.keys("queue:sq|*")).length === 0,
    30_000,
    "the private queue is acknowledged",
  );
  assert.equal(await redis.redis.llen("ran"), 0);
  await worker.stop();
});

test("stored switches are parsed as hostile input; --for durations", () => {
  assert.deepEqual(parseSwitch('{"action":"defer","delay":60,"at":5}'), { action: "defer", delay: 60, at: 5 });
  assert.deepEqual(parseSwitch('{"action":"defer","delay":-1}'), { action: "defer", delay: 300, at: 0 });
  assert.deepEqual(parseSwitch('{"action":"drop"}'), { action: "drop", at: 0 });
  for (const bad of ["", "nope", "null", "[]", '{"action":"explode"}', '"drop"'])
    assert.equal(parseSwitch(bad), undefined);
  assert.equal(parseDelay("90"), 90);
  assert.equal(parseDelay("5m"), 300);
  assert.equal(parseDelay("2h"), 7200);
  assert.throws(() => parseDelay("5 minutes"), /--for must be a duration such as 30s, 5m/);
  assert.throws(() => parseDelay("0s"), /--for must be a duration/);
});
