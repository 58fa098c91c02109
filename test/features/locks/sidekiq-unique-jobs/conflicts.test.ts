/**
 * sidekiq-unique-jobs conflict strategies on the push side (log, raise, reject, replace, reschedule)
 * and declaration errors, with a real Redis.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError } from "../../../../src/wire/errors.js";
import { Job } from "../../../../src/index.js";
import { SujConflictError } from "../../../../src/features/locks/sidekiq-unique-jobs/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { lockKit } from "../../../helpers/lockKit.js";
import { sujKit } from "./kit.js";
import { SujExecutedJob, SujRaiseJob, SujRejectJob, SujReplaceJob, SujRescheduleJob } from "../../../jobs/sujJobs.js";

const handle = useRedis();
const { withClient, push } = lockKit(handle);
const { lockOf, holders } = sujKit(handle);

test("push-side strategies: log drops, raise throws, reject kills, replace swaps, reschedule defers", async () => {
  await withClient(async (client) => {
    const first = (await push(client, SujExecutedJob, [1]))!;
    assert.ok(first);
    assert.equal(await push(client, SujExecutedJob, [1]), null, "log (default): dropped, null");

    const raiser = (await push(client, SujRaiseJob, [1]))!;
    await assert.rejects(push(client, SujRaiseJob, [1]), SujConflictError, "raise: the push rejects");
    assert.deepEqual(await holders(await lockOf(raiser)), [raiser]);

    await push(client, SujRejectJob, [1]);
    const rejected = await push(client, SujRejectJob, [1]);
    assert.equal(rejected, null);
    const dead = (await handle.redis.zrange("dead", 0, -1)).map((j) => JSON.parse(j) as { class: string });
    assert.deepEqual(
      dead.map((j) => j.class),
      ["SujRejectJob"],
      "reject: the duplicate is in the dead set",
    );

    const old = (await push(client, SujReplaceJob, [1]))!;
    const digest = await lockOf(old);
    const replacement = (await push(client, SujReplaceJob, [1]))!;
    assert.ok(replacement && replacement !== old, "replace: the new push is accepted");
    const queued = (await handle.redis.lrange("queue:default", 0, -1)).map(
      (j) => (JSON.parse(j) as { jid: string }).jid,
    );
    assert.ok(!queued.includes(old), "the old job is gone from the queue");
    assert.ok(queued.includes(replacement));
    assert.deepEqual(await holders(digest), [replacement], "and the new one holds the lock");

    const holder = (await push(client, SujRescheduleJob, [1]))!;
    const later = (await push(client, SujRescheduleJob, [1]))!;
    assert.ok(later, "reschedule: the push is accepted…");
    const score = Number(
      await handle.redis.zscore(
        "schedule",
        (await handle.redis.zrange("schedule", 0, -1)).find((j) => j.includes(later))!,
      ),
    );
    assert.ok(Math.abs(score - (Date.now() / 1000 + 5)) < 3, `…for about 5 s later (score ${score})`);
    assert.deepEqual(await holders(await lockOf(holder)), [holder], "without taking the lock");
  });
});

test("a bad declaration is refused at the first push with a ConfigError naming the class and the fix", async () => {
  class UnsupportedLockJob extends Job {
    static override options = { lock: "until_and_while_executing" };
    perform(): void {}
  }
  class NegativeTtlJob extends Job {
    static override options = { lock: "until_executed", lockTtl: -5 };
    perform(): void {}
  }
  // @ts-expect-error -- a strategy the gem does not have: refused at the first push, tested here
  class UnknownStrategyJob extends Job {
    static override options = { lock: "while_executing", onConflict: { server: "explode" } };
    perform(): void {}
  }
  await withClient(async (client) => {
    for (const [klass, what] of [
      [UnsupportedLockJob, /UnsupportedLockJob: lock must be until_executing/],
      [NegativeTtlJob, /NegativeTtlJob: lockTtl must be seconds/],
      [UnknownStrategyJob, /UnknownStrategyJob: onConflict must be one of log, raise/],
    ] as const) {
      await assert.rejects(
        push(client, klass, [1]),
        (error: Error) => error instanceof ConfigError && what.test(error.message),
      );
    }
    assert.equal(await handle.redis.dbsize(), 0, "nothing was written");
  });
});
