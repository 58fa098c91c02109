import { describe, test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Job, scheduledAt } from "../../src/client/Job.js";
import { Client } from "../../src/client/Client.js";
import { configureClient, closeDefaultClient } from "../../src/client/defaultClient.js";
import { ArgumentError } from "../../src/wire/errors.js";
import { useRedis } from "../helpers/redis.js";

// An app's own option, declared the documented way (docs/testing.md#custom-job-options).
declare module "../../src/client/options.js" {
  interface JobOptions {
    customFlag?: boolean;
  }
}

const redis = useRedis();

class HardJob extends Job {
  static override options = { queue: "critical", retry: 5 };
  async perform(_name: string, _count: number): Promise<void> {}
}

class RenamedJob extends Job {
  static override jobName = "Legacy::Renamed";
  perform(): void {}
}

class NoOptionsJob extends Job {
  perform(_x: { id: number }): void {}
}

// Node 20 does not wait for useRedis()'s async `before` before starting another file-level `before`,
// so the default client is pointed at the private Redis in `beforeEach`, which runs after both; it is
// closed in `afterEach`, while that Redis is surely up (useRedis()'s `after` stops it).
beforeEach(() => {
  if (!redis.url) throw new Error("the private Redis is not running; refusing to fall back to REDIS_URL");
  configureClient({ redis: redis.url });
});
afterEach(closeDefaultClient);

type Stored = Record<string, unknown> & { jid: string; args: unknown[]; queue: string; class: string };

async function queued(queue: string): Promise<Stored[]> {
  return (await redis.redis.lrange(`queue:${queue}`, 0, -1)).map((raw) => JSON.parse(raw) as Stored);
}

async function scheduled(): Promise<{ job: Stored; score: number }[]> {
  const flat = await redis.redis.zrange("schedule", 0, -1, "WITHSCORES");
  const out: { job: Stored; score: number }[] = [];
  for (let i = 0; i < flat.length; i += 2)
    out.push({ job: JSON.parse(flat[i]!) as Stored, score: Number(flat[i + 1]) });
  return out;
}

const nowSeconds = () => Date.now() / 1000;

describe("performAsync", () => {
  test("enqueues now with the class options", async () => {
    const jid = await HardJob.performAsync("bob", 5);
    assert.match(jid ?? "", /^[0-9a-f]{24}$/);
    const [job] = await queued("critical");
    assert.ok(job);
    assert.equal(job.jid, jid);
    assert.equal(job.class, "HardJob");
    assert.deepEqual(job.args, ["bob", 5]);
    assert.equal(job.retry, 5);
    assert.equal(job.queue, "critical");
    assert.equal(await redis.redis.exists("schedule"), 0);
  });

  test("without options uses Sidekiq's defaults", async () => {
    await NoOptionsJob.performAsync({ id: 1 });
    const [job] = await queued("default");
    assert.equal(job?.retry, true);
    assert.deepEqual(job?.args, [{ id: 1 }]);
  });

  test("static jobName is the name on the wire", async () => {
    await RenamedJob.performAsync();
    const [job] = await queued("default");
    assert.equal(job?.class, "Legacy::Renamed");
  });
});

describe("performIn / performAt", () => {
  test("performIn(60) schedules 60 seconds from now", async () => {
    const before = nowSeconds();
    const jid = await HardJob.performIn(60, "bob", 1);
    const after = nowSeconds();
    const [entry] = await scheduled();
    assert.ok(entry);
    assert.equal(entry.job.jid, jid);
    // A second of slack: the process's two clocks (Date.now, and timeOrigin + the monotonic
    // performance.now that float-second stamps use) drift apart by milliseconds on a busy machine.
    const slack = 1;
    assert.ok(
      entry.score >= before + 60 - slack && entry.score <= after + 60 + slack,
      `score ${entry.score}, read between ${before} and ${after}`,
    );
    assert.ok(!("at" in entry.job));
    assert.equal(entry.job.queue, "critical");
    assert.equal(await redis.redis.exists("queue:critical"), 0);
  });

  test("values >= 1e9 are absolute epoch seconds", async () => {
    const at = Math.floor(nowSeconds()) + 3600 + 0.25;
    await HardJob.performIn(at, "abs", 1);
    const [entry] = await scheduled();
    assert.equal(entry?.score, at);
  });

  test("just below 1e9 is still relative (about 31 years from now)", async () => {
    const before = nowSeconds();
    await HardJob.performIn(999_999_999, "rel", 1);
    const [entry] = await scheduled();
    assert.ok(entry && entry.score >= before + 999_999_999 - 0.001 && entry.score < before + 999_999_999 + 5);
  });

  test("1e9 itself is an epoch in the past (2001), so the job is enqueued now", async () => {
    await HardJob.performIn(1e9 + 5, "past", 1);
    assert.equal(await redis.redis.zcard("schedule"), 0);
    assert.equal((await queued("critical")).length, 1);
  });

  test("a negative or zero interval enqueues now", async () => {
    await HardJob.performIn(-5, "neg", 1);
    await HardJob.performIn(0, "zero", 1);
    assert.equal(await redis.redis.zcard("schedule"), 0);
    assert.deepEqual(
      (await queued("critical")).map((j) => j.args[0]),
      ["zero", "neg"],
    );
  });

  test("performAt(Date) schedules at that instant", async () => {
    const when = new Date(Date.now() + 90_000);
    await HardJob.performAt(when, "date", 2);
    const [entry] = await scheduled();
    assert.equal(entry?.score, when.getTime() / 1000);
  });

  test("performAt(epoch seconds) schedules at that time", async () => {
    const at = nowSeconds() + 120;
    await HardJob.performAt(at, "epoch", 2);
    const [entry] = await scheduled();
    assert.equal(entry?.score, at);
  });

  test("performAt(a past Date) enqueues now", async () => {
    await HardJob.performAt(new Date(Date.now() - 1000), "late", 3);
    assert.equal(await redis.redis.zcard("schedule"), 0);
    assert.equal((await queued("critical"))[0]?.args[0], "late");
  });

  test("invalid times are rejected before anything is written", async () => {
    await assert.rejects(
      async () => HardJob.performAt(new Date("nope"), "x", 1),
      new ArgumentError("the run time is an invalid Date"),
    );
    await assert.rejects(
      async () => HardJob.performIn(NaN, "x", 1),
      /expected seconds or a Date for the run time, got NaN/,
    );
    await assert.rejects(async () => HardJob.performIn(Infinity, "x", 1), ArgumentError);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("scheduledAt returns undefined for now, epoch seconds otherwise", () => {
    assert.equal(scheduledAt(-1), undefined);
    assert.equal(scheduledAt(new Date(0)), undefined);
    assert.equal(scheduledAt(2_000_000_000), 2_000_000_000);
    const rel = scheduledAt(10);
    assert.ok(rel !== undefined && Math.abs(rel - (nowSeconds() + 10)) < 1);
  });
});

describe("set", () => {
  test("set({queue, retry: false}) overrides the class options", async () => {
    await HardJob.set({ queue: "low", retry: false }).performAsync("bob", 5);
    const [job] = await queued("low");
    assert.equal(job?.queue, "low");
    assert.equal(job?.retry, false);
    assert.equal((await queued("critical")).length, 0);
  });

  test("set({wait}) schedules, and wait/waitUntil/client never reach the wire", async () => {
    const before = nowSeconds();
    await HardJob.set({ queue: "low", retry: false, wait: 30 }).performAsync("w", 1);
    const [entry] = await scheduled();
    assert.ok(entry && entry.score >= before + 30 - 0.001 && entry.score < before + 31);
    assert.equal(entry.job.queue, "low");
    assert.equal(entry.job.retry, false);
    for (const key of ["wait", "wait_until", "waitUntil", "client", "at"]) assert.ok(!(key in entry.job), key);
  });

  test("set({waitUntil: Date}) schedules at that time", async () => {
    const when = new Date(Date.now() + 45_000);
    await HardJob.set({ waitUntil: when }).performAsync("u", 1);
    assert.equal((await scheduled())[0]?.score, when.getTime() / 1000);
  });

  test("set calls chain, later options winning; custom options go snake_case", async () => {
    await HardJob.set({ queue: "a", tags: ["x"] })
      .set({ queue: "b", customFlag: true })
      .performAsync("c", 1);
    const [job] = await queued("b");
    assert.deepEqual(job?.tags, ["x"]);
    assert.equal(job?.custom_flag, true);
    assert.equal(job?.retry, 5);
  });

  test("set({client}) pushes through another client", async () => {
    const other = new Client({ redis: redis.url, sidekiqVersion: 8 });
    await HardJob.set({ client: other }).performAsync("v8", 1);
    const [raw] = await redis.redis.lrange("queue:critical", 0, -1);
    assert.match(raw ?? "", /"created_at":\d{13}[,}]/);
    await other.close();
  });
});

describe("performBulk", () => {
  test("enqueues every argument list in order and returns their jids", async () => {
    const jids = await HardJob.performBulk([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    assert.equal(jids.length, 3);
    const jobs = (await queued("critical")).reverse();
    assert.deepEqual(
      jobs.map((j) => j.jid),
      jids,
    );
    assert.deepEqual(
      jobs.map((j) => j.args),
      [
        ["a", 1],
        ["b", 2],
        ["c", 3],
      ],
    );
  });

  test("set({wait}).performBulk schedules them all at one time; batchSize is passed on", async () => {
    await redis.redis.config("RESETSTAT");
    const jids = await HardJob.set({ wait: 60 }).performBulk(
      [
        ["a", 1],
        ["b", 2],
        ["c", 3],
      ],
      { batchSize: 2 },
    );
    const entries = await scheduled();
    assert.equal(entries.length, 3);
    assert.equal(new Set(entries.map((e) => e.score)).size, 1);
    assert.deepEqual(entries.map((e) => e.job.jid).sort(), [...jids].sort());
    assert.match(await redis.redis.info("commandstats"), /cmdstat_zadd:calls=2,/);
  });
});

describe("instances", () => {
  test("a job instance starts with an empty jid and a live signal", () => {
    const job = new RenamedJob();
    assert.equal(job.jid, "");
    assert.equal(job.signal.aborted, false);
    assert.equal(job.payload, undefined);
  });
});

// Type-level checks: compiled by tsc (the build fails if an expected error disappears), never run.
export function typeChecks(): void {
  void HardJob.performAsync("bob", 5);
  void HardJob.performIn(60, "bob", 5);
  void HardJob.performAt(new Date(), "bob", 5);
  void HardJob.set({ queue: "low" }).performAsync("bob", 5);
  void HardJob.performBulk([["a", 1]]);
  void NoOptionsJob.performAsync({ id: 1 });
  const jid: Promise<string | null> = RenamedJob.performAsync();
  void jid;
  // @ts-expect-error wrong argument type
  void HardJob.performAsync(1, 5);
  // @ts-expect-error missing argument
  void HardJob.performAsync("bob");
  // @ts-expect-error too many arguments
  void RenamedJob.performAsync(1);
  // @ts-expect-error performIn needs the interval first
  void HardJob.performIn("bob", 5);
  // @ts-expect-error bulk entries are argument tuples
  void HardJob.performBulk([["a", "b"]]);
  // @ts-expect-error retry is boolean or number
  void HardJob.set({ retry: "yes" });
}
