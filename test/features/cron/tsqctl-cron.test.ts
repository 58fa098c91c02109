/**
 * `tsqctl cron list|enqueue|disable|enable` (src/admin/tsqctl/cron.ts) against schedules stored by a
 * real scheduler pass; in-process through `main`, plus one run of the real bin/tsqctl.js.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { main } from "../../../src/cli/tsqctl.js";
import type { CronJson } from "../../../src/admin/tsqctl/cron.js";
import { CronScheduler } from "../../../src/features/cron/CronScheduler.js";
import type { CronEntry } from "../../../src/platform/config/cronEntry.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { ROOT, eventually } from "../../helpers/tsqProcess.js";
import { giveUpAfter } from "../../helpers/timing.js";

const handle = useRedis();

class ReportJob {
  static options = { queue: "reports", retry: 2 };
  perform(): void {}
}

async function tsqctl(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...argv, "--redis-url", handle.url], {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
  });
  return { code, out, err };
}

const ENTRIES: CronEntry[] = [
  {
    name: "every_second",
    cron: "* * * * * *",
    class: "ReportJob",
    args: ["tick"],
    enabled: true,
    catchUp: false,
    source: "config/tsq.yml",
  },
  {
    name: "tokyo_midnight",
    cron: "0 0 * * *",
    class: "ReportJob",
    args: [],
    tz: "Asia/Tokyo",
    description: "midnight in Tokyo",
    enabled: true,
    catchUp: true,
    source: "config/tsq.yml",
  },
];

/** Runs a leader's scheduler until the every-second schedule has run once; leaves the hashes behind. */
async function runLeader(t: TestContext): Promise<void> {
  const ctx = testLauncher(handle.url, [ReportJob]).ctx;
  const scheduler = new CronScheduler(ctx, ENTRIES, { isLeader: () => true }, { grace: 60, claimTtl: 120 });
  t.after(() => scheduler.stop());
  scheduler.start();
  await eventually(async () => (await handle.redis.llen("queue:reports")) > 0, 3000, "a tick pushed");
  await scheduler.stop();
}

test("list --json shows each schedule with its last and next run", async (t) => {
  await runLeader(t);
  const { code, out } = await tsqctl("cron", "list", "--json");
  assert.equal(code, 0);
  const rows = JSON.parse(out) as CronJson[];
  assert.deepEqual(
    rows.map((r) => r.name),
    ["every_second", "tokyo_midnight"],
  );
  const [every, tokyo] = rows as [CronJson, CronJson];
  const now = Date.now() / 1000;
  assert.ok(every.last_run !== null && now - every.last_run < 5, `last_run ${every.last_run}`);
  assert.equal(every.last_run_at, new Date(every.last_run * 1000).toISOString());
  assert.ok(every.last_jid !== null);
  assert.ok(every.next_run !== null && every.next_run > now - 1 && every.next_run <= now + 1);
  assert.equal(every.queue, "reports", "the class's queue");
  assert.deepEqual(every.args, ["tick"]);
  assert.equal(every.enabled, true);
  assert.equal(tokyo.last_run, null, "has not run");
  assert.equal(tokyo.tz, "Asia/Tokyo");
  assert.equal(tokyo.catch_up, true);
  assert.equal(tokyo.description, "midnight in Tokyo");
  // Midnight in Tokyo is 15:00 UTC, within the next 24 hours.
  assert.match(tokyo.next_run_at ?? "", /T15:00:00\.000Z$/);
  assert.ok(tokyo.next_run! > now && tokyo.next_run! <= now + 86_400);

  const text = await tsqctl("cron", "list");
  assert.equal(text.code, 0);
  assert.match(text.out, /^SCHEDULER\s+NAME\s+CRON\s+TZ\s+CLASS\s+QUEUE\s+ARGS\s+ENABLED\s+LAST RUN\s+NEXT RUN\n/);
  assert.match(
    text.out,
    /tokyo_midnight\s+0 0 \* \* \*\s+Asia\/Tokyo\s+ReportJob\s+reports\s+\[\]\s+yes\s+-\s+\d{4}-\d\d-\d\d 15:00:00 UTC/,
  );
});

test("enqueue pushes the job now as the leader would; disable/enable flip the switch; unknown names exit 2", async (t) => {
  await runLeader(t);
  await handle.redis.del("queue:reports");
  const pushed = await tsqctl("cron", "enqueue", "tokyo_midnight");
  assert.equal(pushed.code, 0, pushed.err);
  const jid = pushed.out.trim();
  const [json] = await handle.redis.lrange("queue:reports", 0, -1);
  const job = JSON.parse(json!) as Record<string, unknown>;
  assert.equal(job.jid, jid);
  assert.equal(job.class, "ReportJob");
  assert.equal(job.retry, 2, "the class's options were stored by the leader and applied");
  assert.equal(job.cron, "tokyo_midnight");

  assert.equal((await tsqctl("cron", "disable", "tokyo_midnight")).out, "tokyo_midnight disabled\n");
  let rows = JSON.parse((await tsqctl("cron", "list", "--json")).out) as CronJson[];
  const tokyo = rows.find((r) => r.name === "tokyo_midnight")!;
  assert.equal(tokyo.enabled, false);
  assert.equal(tokyo.next_run, null, "no next run while disabled");
  assert.equal(tokyo.last_jid, jid);
  const enabled = await tsqctl("cron", "enable", "tokyo_midnight", "--json");
  assert.deepEqual(JSON.parse(enabled.out), {
    action: "enable",
    target: "tokyo_midnight",
    count: 1,
    ids: ["tokyo_midnight"],
  });
  rows = JSON.parse((await tsqctl("cron", "list", "--json")).out) as CronJson[];
  assert.equal(rows.find((r) => r.name === "tokyo_midnight")!.enabled, true);

  const unknown = await tsqctl("cron", "disable", "nope");
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /no periodic schedule named "nope" \(known: every_second, tokyo_midnight\)/);
});

test("the real tsqctl binary lists schedules as JSON (empty before any leader ran)", () => {
  const result = spawnSync(process.execPath, [join(ROOT, "bin/tsqctl.js"), "cron", "list", "--json"], {
    env: { ...process.env, REDIS_URL: handle.url },
    encoding: "utf8",
    timeout: giveUpAfter(30_000),
  });
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), []);
});
