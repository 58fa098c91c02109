/**
 * sidekiq-cron interop (src/features/cron/SidekiqCron*.ts, src/admin/api/CronSchedules.ts) against schedules
 * saved by Debian's real sidekiq-cron 1.8.0 (test/ruby/cron_schedules.rb):
 *
 * - `tsqctl cron` lists them beside tsq's own, marked by scheduler, and its enable/disable/enqueue
 *   change what sidekiq-cron itself reads back;
 * - a tsq process pushes each kind of schedule as sidekiq-cron would, only when opted in;
 * - a 2-process tsq-cluster (one child SIGKILLed midway) enqueues each tick of a per-second schedule once.
 *
 * The mixed Ruby + tsq fleet is test/interop/sidekiq-cron-fleet.slow.test.ts.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../../src/cli/tsqctl.js";
import type { CronJson } from "../../../src/admin/tsqctl/cron.js";
import { CronStore } from "../../../src/features/cron/CronStore.js";
import type { JobPayload } from "../../../src/wire/payload.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { requireRubyLibrary, runRubyScript } from "../../helpers/rails.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";

const redis = useRedis();

interface RubyView {
  name: string;
  status: string;
  last_enqueue_time: number | null;
  jid_history: { jid: string | null; enqueued: string }[] | null;
}

async function tsqctl(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...argv, "--redis-url", redis.url], {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
  });
  return { code, out, err };
}

/** Saves schedules with sidekiq-cron's own `Job.load_from_array`; fails on any validation error. */
async function createSchedules(schedules: Record<string, unknown>[]): Promise<void> {
  const errors = await runRubyScript<Record<string, string[]>>(
    "cron_schedules.rb",
    ["create", JSON.stringify(schedules)],
    redis.url,
  );
  assert.deepEqual(errors, {}, "sidekiq-cron accepted every schedule");
}

async function rubyView(): Promise<Map<string, RubyView>> {
  const views = await runRubyScript<RubyView[]>("cron_schedules.rb", ["show"], redis.url);
  return new Map(views.map((view) => [view.name, view]));
}

const jobsIn = async (queue: string) =>
  (await redis.redis.lrange(`queue:${queue}`, 0, -1)).map((raw) => JSON.parse(raw) as JobPayload);

function needsSidekiqCron(t: TestContext): boolean {
  return requireRubyLibrary(t, "sidekiq/cron/job", "ruby-sidekiq-cron");
}

test("tsqctl cron lists sidekiq-cron's schedules beside tsq's, and acts on them as sidekiq-cron reads them", async (t) => {
  if (!needsSidekiqCron(t)) return;
  await createSchedules([
    {
      name: "nightly",
      cron: "0 3 * * * Europe/Paris",
      class: "NightlyJob",
      args: ["x", 1],
      queue: "low",
      description: "3 am in Paris",
    },
    { name: "reports", cron: "*/10 * * * * *", class: "ReportJob", active_job: true, args: [{ kind: "daily" }] },
  ]);
  const own = { cron: "0 * * * *", class: "OwnJob", args: [], enabled: true, catchUp: false, jobOptions: {} };
  await new CronStore(redis.redis).sync([{ ...own, name: "hourly", source: "config/tsq.yml" }], Date.now() / 1000);

  const listed = await tsqctl("cron", "list", "--json");
  assert.equal(listed.code, 0, listed.err);
  const rows = JSON.parse(listed.out) as CronJson[];
  assert.deepEqual(
    rows.map((r) => [r.scheduler, r.name]),
    [
      ["tsq", "hourly"],
      ["sidekiq-cron", "nightly"],
      ["sidekiq-cron", "reports"],
    ],
  );
  const nightly = rows[1]!;
  assert.equal(nightly.cron, "0 3 * * *");
  assert.equal(nightly.tz, "Europe/Paris");
  assert.equal(nightly.class, "NightlyJob");
  assert.equal(nightly.queue, "low");
  assert.deepEqual(nightly.args, ["x", 1]);
  assert.equal(nightly.description, "3 am in Paris");
  assert.equal(nightly.enabled, true);
  assert.match(nightly.next_run_at ?? "", /T0[12]:00:00\.000Z$/, "3:00 in Paris is 01:00 or 02:00 UTC");
  assert.equal(rows[2]!.source, "sidekiq-cron (ActiveJob)");
  const text = await tsqctl("cron", "list");
  assert.match(text.out, /^sidekiq-cron\s+nightly\s+0 3 \* \* \*\s+Europe\/Paris\s+NightlyJob\s+low/m);
  assert.match(text.out, /^tsq\s+hourly\s+0 \* \* \* \*/m);

  assert.equal((await tsqctl("cron", "disable", "nightly")).code, 0);
  assert.equal((await rubyView()).get("nightly")!.status, "disabled");
  assert.equal((await tsqctl("cron", "enable", "nightly")).code, 0);
  assert.equal((await rubyView()).get("nightly")!.status, "enabled");

  const before = Date.now() / 1000;
  const pushed = await tsqctl("cron", "enqueue", "nightly");
  assert.equal(pushed.code, 0, pushed.err);
  const [job] = await jobsIn("low");
  assert.equal(job!.jid, pushed.out.trim());
  assert.deepEqual([job!.class, job!.args, job!.queue], ["NightlyJob", ["x", 1], "low"]);
  const view = (await rubyView()).get("nightly")!;
  assert.ok(view.last_enqueue_time! >= Math.floor(before) && view.last_enqueue_time! <= Date.now() / 1000 + 1);
  assert.equal(view.jid_history![0]!.jid, job!.jid, "Ruby reads the jid history");

  assert.equal((await tsqctl("cron", "enqueue", "reports")).code, 0);
  const [wrapper] = await jobsIn("default");
  assert.equal(wrapper!.class, "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper");
  assert.equal(wrapper!.wrapped, "ReportJob");
  assert.deepEqual((wrapper!.args[0] as { arguments: unknown }).arguments, [{ kind: "daily", _aj_symbol_keys: [] }]);

  await new CronStore(redis.redis).sync([{ ...own, name: "nightly", source: "config/tsq.yml" }], Date.now() / 1000);
  const ambiguous = await tsqctl("cron", "disable", "nightly");
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.err, /both tsq and sidekiq-cron have a schedule named "nightly".*--scheduler/);
  assert.equal((await tsqctl("cron", "disable", "nightly", "--scheduler", "sidekiq-cron")).code, 0);
  assert.equal((await rubyView()).get("nightly")!.status, "disabled");
  assert.equal((await tsqctl("cron", "enable", "nope")).code, 2);
});

class TsTickJob {
  static options = { retry: 5 };
  perform(): void {}
}

test("an opted-in process pushes each kind of schedule as sidekiq-cron would; without the opt-in, none", async (t) => {
  if (!needsSidekiqCron(t)) return;
  await createSchedules([
    { name: "registered", cron: "* * * * * *", class: "TsTickJob", queue: "ts" },
    { name: "plain", cron: "* * * * * *", class: "RubyOnlyJob", queue: "plain", args: ["a"], date_as_argument: true },
    {
      name: "active",
      cron: "* * * * * *",
      class: "RailsJob",
      queue: "aj",
      active_job: true,
      symbolize_args: true,
      args: [{ a: 1 }],
    },
    { name: "paused", cron: "* * * * * *", class: "RubyOnlyJob", queue: "paused", status: "disabled" },
  ]);
  const bystander = testLauncher(redis.url, [TsTickJob]);
  await bystander.start();
  await new Promise((r) => setTimeout(r, 2500));
  await bystander.stop();
  assert.equal(await redis.redis.keys("queue:*").then((keys) => keys.length), 0, "not opted in: nothing pushed");

  const launcher = testLauncher(redis.url, [TsTickJob], { sidekiqCron: true, queues: [{ name: "none", weight: 0 }] });
  const optedInAt = Math.floor(Date.now() / 1000); // whole seconds, as sidekiq-cron keeps the time
  await launcher.start();
  await eventually(
    async () => (await redis.redis.llen("queue:ts")) >= 2 && (await redis.redis.llen("queue:aj")) >= 2,
    8000,
    "two ticks of each schedule",
  );
  await launcher.stop();
  const [registered] = await jobsIn("ts");
  assert.deepEqual([registered!.class, registered!.retry, registered!.args], ["TsTickJob", 5, []], "its options");
  const [plain] = await jobsIn("plain");
  assert.equal(plain!.class, "RubyOnlyJob");
  assert.equal(plain!.args[0], "a");
  const dated = plain!.args[1] as number;
  assert.ok(Math.abs(dated - (plain!.created_at as number)) < 2, "date_as_argument: the push time, epoch s");
  const [active] = await jobsIn("aj");
  assert.equal(active!.wrapped, "RailsJob");
  assert.deepEqual((active!.args[0] as { arguments: unknown }).arguments, [{ a: 1, _aj_symbol_keys: ["a"] }]);
  assert.equal(await redis.redis.llen("queue:paused"), 0, "a disabled schedule is skipped");
  const views = await rubyView();
  for (const name of ["registered", "plain", "active"]) {
    const at = views.get(name)!.last_enqueue_time!;
    assert.ok(
      at >= optedInAt,
      `${name}: Ruby reads last_enqueue_time (${at}), a tick of the opted-in process (${optedInAt})`,
    );
  }
});

test("a 2-process tsq fleet enqueues each tick of a per-second schedule once, across a SIGKILLed child", async (t) => {
  if (!needsSidekiqCron(t)) return;
  await createSchedules([{ name: "every_second", cron: "* * * * * *", class: "RubyOnlyJob", queue: "ticks" }]);
  // sidekiq-cron's save marks the tick of the moment as done, so it is not enqueued right away.
  const markedAtSave = new Set(await redis.redis.zrange("cron_job:every_second:enqueued", 0, -1));
  const dir = scratchDir("tsq-sidekiq-cron");
  const config = join(dir, "tsq.yml");
  writeFileSync(config, "heartbeat_interval: 1\nsidekiq_cron: true\nsidekiq_cron_poll_interval: 2\n");
  const cluster = startTsq(
    ["--processes", "2", "-r", TEST_JOBS, "-q", "default", "-C", config, "--metrics-port", "0"],
    { REDIS_URL: redis.url },
    "bin/tsq-cluster.js",
  );
  t.after(() => cluster.stop(15_000));
  await eventually(async () => (await redis.redis.scard("processes")) === 2, 30_000, "2 children up");
  const start = Math.floor(Date.now() / 1000);
  await new Promise((r) => setTimeout(r, 6000));
  const [victim] = await redis.redis.smembers("processes");
  process.kill((JSON.parse((await redis.redis.hget(victim!, "info"))!) as { pid: number }).pid, "SIGKILL");
  await new Promise((r) => setTimeout(r, 6000));
  const end = Math.floor(Date.now() / 1000);
  await cluster.stop(15_000);

  const members = await redis.redis.zrange("cron_job:every_second:enqueued", 0, -1);
  const claimed = members.filter((iso) => !markedAtSave.has(iso)).map((iso) => Date.parse(iso) / 1000);
  const jobs = await jobsIn("ticks");
  // A child SIGKILLed between its claim (the ZADD) and its push loses that one tick, as a Ruby process
  // would (SidekiqCronPoller.ts): at most one claimed tick without a job, and never a job more.
  assert.ok(
    jobs.length <= claimed.length && jobs.length >= claimed.length - 1,
    `one job per claimed tick, but the one the kill may have cut: ${jobs.length} jobs, ${claimed.length} claimed`,
  );
  for (let tick = start; tick <= end - 2; tick++) {
    assert.ok(claimed.includes(tick), `tick ${tick} enqueued (claimed: ${claimed.join(", ")})`);
  }
  assert.equal(new Set(claimed).size, claimed.length);
  assert.ok(claimed.length >= 10, `${claimed.length} ticks in about 12 s`);
});
