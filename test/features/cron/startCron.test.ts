/**
 * `startCron` (src/features/cron/index.ts), as the Launcher runs it: three in-process "processes" on one Redis,
 * each electing and scheduling; exactly one job per tick whichever leads, across a step-down.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { startCron, type CronHandle } from "../../../src/features/cron/index.js";
import type { CronEntry } from "../../../src/platform/config/cronEntry.js";
import { ConfigError } from "../../../src/wire/errors.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";

const handle = useRedis();

class TickJob {
  perform(): void {}
}

const EVERY_SECOND: CronEntry = {
  name: "every_second",
  cron: "* * * * * *",
  class: "TickJob",
  args: [],
  enabled: true,
  catchUp: false,
  source: "test",
};
const FAST = { leaderTtl: 2, leaderRenewInterval: 0.5, leaderCheckInterval: 1, cronGracePeriod: 30 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function processes(t: TestContext, n: number): { cron: CronHandle; identity: string }[] {
  return Array.from({ length: n }, () => {
    const ctx = testLauncher(handle.url, [TickJob], { cron: [EVERY_SECOND], ...FAST }).ctx;
    const cron = startCron(ctx);
    assert.ok(cron, "a process with schedules takes part in the election");
    t.after(() => cron.stop());
    return { cron, identity: ctx.identity };
  });
}

async function ticks(): Promise<number[]> {
  return (await handle.redis.lrange("queue:default", 0, -1))
    .map((json) => (JSON.parse(json) as { cron_at: number }).cron_at)
    .sort((a, b) => a - b);
}

test("three processes: one leader, one job per second, and the ticks go on after the leader steps down", async (t) => {
  const all = processes(t, 3);
  const first = await eventually(
    async () => {
      const leaders = all.filter((p) => p.cron.isLeader());
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    5000,
    "one leader",
  );
  assert.equal(await handle.redis.get("dear-leader"), first.identity);
  await sleep(3000);
  await first.cron.stop(); // quiet: stops scheduling, then deletes dear-leader
  await first.cron.stop(); // idempotent
  const steppedDown = Math.floor(Date.now() / 1000);
  const second = await eventually(async () => all.find((p) => p.cron.isLeader()), 5000, "a new leader");
  assert.notEqual(second.identity, first.identity);
  // Until the new leader has pushed ticks of its own: how many a loaded machine gets in a few seconds varies.
  await eventually(async () => (await ticks()).some((at) => at > steppedDown + 1), 30_000, "ticks after the change");
  await Promise.all(all.map((p) => p.cron.stop()));
  const seen = await ticks();
  assert.equal(new Set(seen).size, seen.length, `no tick twice: ${seen.join(", ")}`);
  const expected = Array.from({ length: seen.at(-1)! - seen[0]! + 1 }, (_, i) => seen[0]! + i);
  assert.deepEqual(seen, expected, "no tick missing, across the change of leader");
  assert.ok(
    seen[0]! <= steppedDown && seen.at(-1)! > steppedDown + 1,
    `ticks ${seen.join(", ")} span the change of leader at ${steppedDown}`,
  );
  assert.equal(await handle.redis.get("dear-leader"), null, "every process stepped down");
});

test("startCron rejects an unknown class with a message naming the schedule", () => {
  const ctx = testLauncher(handle.url, [], { cron: [EVERY_SECOND] }).ctx;
  assert.throws(
    () => startCron(ctx),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(
        error.message,
        /^cron schedule "every_second" \(test\): class "TickJob" is not a registered job class/,
      );
      return true;
    },
  );
});

test("a process with no schedule stays out of the election (dear-leader is also Sidekiq Enterprise's)", async () => {
  const ctx = testLauncher(handle.url, [TickJob], { cron: [], ...FAST }).ctx;
  assert.equal(startCron(ctx), undefined);
  await sleep(300);
  assert.equal(await handle.redis.exists("dear-leader"), 0);
});
