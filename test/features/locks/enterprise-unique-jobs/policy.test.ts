/**
 * The unique-job API against a real Redis: options read from the class (and checked), per-push
 * `set({ uniqueFor: false })`, `uniqueContext`, the payload fields Enterprise writes, scheduled jobs'
 * lock length, `Unique.locked`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { ConfigError, Job, type JobOptions } from "../../../../src/index.js";
import { Unique, uniquePolicyOf } from "../../../../src/features/locks/enterprise-unique-jobs/index.js";
import { locksHeldBy, releaseLocksOf } from "../../../../src/features/locks/release.js";
import { useRedis } from "../../../helpers/redis.js";

const handle = useRedis();

class ReportJob extends Job {
  static override options = { uniqueFor: 60, queue: "reports" };
  async perform(_account: number, _day: string): Promise<void> {}
}

class PerAccountJob extends Job {
  static override options = { uniqueFor: 60, uniqueUntil: "start" as const };
  static uniqueContext(args: unknown[]): unknown[] {
    return ["PerAccountJob", args[0]];
  }
  async perform(_account: number, _note: string): Promise<void> {}
}

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ redis: handle.url });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

test("class, queue and args identify a unique job; uniqueContext replaces them", async () => {
  await withClient(async (client) => {
    const first = (await client.push({ class: ReportJob, args: [1, "2026-11-23"] }))!;
    assert.equal(await client.push({ class: ReportJob, args: [1, "2026-11-23"] }), null);
    assert.ok(await client.push({ class: ReportJob, args: [1, "2026-11-24"] }), "other args: another lock");
    assert.ok(await client.push({ class: ReportJob, args: [1, "2026-11-23"], queue: "other" }), "other queue");
    const [stored] = await handle.redis.lrange("queue:reports", -1, -1);
    const job = JSON.parse(stored!) as Record<string, unknown>;
    assert.equal(job.jid, first);
    assert.equal(job.unique_for, 60, "Enterprise's payload field");
    assert.match(String(job.tsq_unique_key), /^tsq:lock:unique:[0-9a-f]{64}$/);
    assert.equal(await Unique.locked(ReportJob, [1, "2026-11-23"], { redis: client.redis }), true);
    assert.equal(await Unique.locked(ReportJob, [1, "2026-11-25"], { redis: client.redis }), false);

    assert.ok(await client.push({ class: PerAccountJob, args: [7, "a"] }));
    assert.equal(await client.push({ class: PerAccountJob, args: [7, "b"] }), null, "the context is the account");
    assert.equal(await Unique.locked(PerAccountJob, [7, "anything"], { redis: client.redis }), true);
  });
});

test("set({ uniqueFor: false }) bypasses; a scheduled job holds its lock for its delay plus uniqueFor", async () => {
  await withClient(async (client) => {
    assert.ok(await client.push({ class: ReportJob, args: [2, "x"] }));
    const bypass = await client.push({ class: ReportJob, args: [2, "x"], unique_for: false });
    assert.ok(bypass, "a push with unique_for false is enqueued");
    const at = Date.now() / 1000 + 120;
    assert.ok(await client.push({ class: ReportJob, args: [3, "x"], at }));
    const key = (JSON.parse((await handle.redis.zrange("schedule", 0, 0))[0]!) as { tsq_unique_key: string })
      .tsq_unique_key;
    const ttl = await handle.redis.pttl(key);
    assert.ok(ttl > 175_000 && ttl <= 180_000, `120 s delay + 60 s uniqueFor, PTTL ${ttl} ms`);
  });
});

test("bad declarations throw a ConfigError naming the class", () => {
  class BadFor extends Job {
    static override options = { uniqueFor: -1 };
    async perform(): Promise<void> {}
  }
  class BadUntil extends Job {
    // A JavaScript caller can write anything: the check is at run time.
    static override options = { uniqueFor: 10, uniqueUntil: "finish" } as unknown as JobOptions;
    async perform(): Promise<void> {}
  }
  class UntilWithoutFor extends Job {
    static override options = { uniqueUntil: "start" as const };
    async perform(): Promise<void> {}
  }
  class Both extends Job {
    static idempotent = true;
    static override options = { uniqueFor: 10 };
    async perform(): Promise<void> {}
  }
  for (const klass of [BadFor, BadUntil, UntilWithoutFor, Both])
    assert.throws(
      () => uniquePolicyOf(klass),
      (e: unknown) => e instanceof ConfigError && e.message.includes(klass.name),
    );
  class Plain extends Job {
    async perform(): Promise<void> {}
  }
  assert.equal(uniquePolicyOf(Plain), undefined);
});

test("the release paths trust tsq_unique_key only when it names a unique lock, and free only the job's own hold", async () => {
  await withClient(async (client) => {
    const holder = (await client.push({ class: ReportJob, args: [9, "y"] }))!;
    const [stored] = await handle.redis.lrange("queue:reports", 0, 0);
    const key = (JSON.parse(stored!) as { tsq_unique_key: string }).tsq_unique_key;
    const hostile = [
      { class: "X", jid: "aaaaaaaaaaaaaaaaaaaaaaaa", args: [], queue: "q", tsq_unique_key: key }, // another jid
      { class: "X", jid: holder, args: [], queue: "q", tsq_unique_key: "queue:reports" }, // not a lock
      { class: "X", jid: holder, args: [], queue: "q", tsq_unique_key: key.replace(":unique:", ":dedup:") },
    ];
    assert.deepEqual(locksHeldBy(JSON.stringify(hostile[1])), [], "a field naming no unique lock is ignored");
    assert.equal(
      await releaseLocksOf(
        handle.redis,
        hostile.map((job) => JSON.stringify(job)),
      ),
      0,
    );
    assert.equal(await Unique.holder(ReportJob, [9, "y"], { redis: client.redis }), holder, "still held");
    assert.equal(await handle.redis.llen("queue:reports"), 1);
  });
});
