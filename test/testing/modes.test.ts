/**
 * tsq/testing's modes on the default client: fake (held per class, drained, cleared, scheduled jobs
 * with their time), inline (perform at once after the JSON round trip, the app's middleware around
 * it, failures reaching the caller), disable (Redis). No Redis is needed for fake and inline: the
 * process's REDIS_URL points at a closed port.
 */
import { after, afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { Job, configureServer, Client, configureClient, defaultClient, closeDefaultClient } from "tsq";
import { fake, inline, disable, drainAll, clearAll, allJobs, testMode } from "tsq/testing";
import { ArgumentError } from "../../src/wire/errors.js";
import { useRedis } from "../helpers/redis.js";
import { queueKey } from "../../src/wire/keys.js";

const redis = useRedis();

const ran: unknown[][] = [];

class HardJob extends Job {
  perform(name: string, count: number): void {
    ran.push(["HardJob", name, count]);
  }
}

class ParentJob extends Job {
  async perform(n: number): Promise<void> {
    ran.push(["ParentJob", n]);
    if (n > 0) await ParentJob.performAsync(n - 1);
    await HardJob.performAsync(`child of ${n}`, n);
  }
}

class FailingJob extends Job {
  perform(): void {
    throw new Error("boom");
  }
}

class LooseJob extends Job {
  perform(value: unknown): void {
    ran.push(["LooseJob", value]);
  }
}

after(() => closeDefaultClient());

afterEach(() => {
  clearAll();
  disable();
  ran.length = 0;
});

test("the default mode is disable", () => {
  assert.equal(testMode(), "disable");
  assert.throws(() => HardJob.jobs, /HardJob.jobs needs tsq\/testing's fake mode: .* call fake\(\) first/);
  fake();
  disable();
  assert.throws(() => HardJob.jobs, /HardJob.jobs: jobs are held only in fake mode and the mode is disable/);
});

test("fake: pushes are held per class, as stored, scheduled ones with their time; nothing runs", async () => {
  fake();
  const jid = await HardJob.set({ queue: "low", tags: ["t"] }).performAsync("bob", 5);
  const before = Date.now() / 1000;
  await HardJob.performIn(60, "later", 1);
  await ParentJob.performAsync(0);
  assert.deepEqual(ran, []);
  assert.equal(HardJob.jobs.length, 2);
  const [now, later] = HardJob.jobs;
  assert.equal(now?.jid, jid);
  assert.deepEqual(now?.args, ["bob", 5]);
  assert.equal(now?.queue, "low");
  assert.deepEqual(now?.tags, ["t"]);
  assert.equal(typeof now?.enqueued_at, "number");
  assert.equal(now?.at, undefined);
  assert.ok(later?.at !== undefined && later.at >= before + 59 && later.at <= Date.now() / 1000 + 61);
  assert.equal(ParentJob.jobs.length, 1);
  assert.equal(allJobs().length, 3);
  // Nothing reached Redis.
  assert.equal(await redis.redis.llen(queueKey("low")), 0);
});

test("fake: drain runs a class's jobs, including those pushed meanwhile; drainAll runs every class", async () => {
  fake();
  await ParentJob.performAsync(2);
  assert.equal(await ParentJob.drain(), 3); // 2, then 1 and 0 pushed while draining
  assert.deepEqual(ran, [
    ["ParentJob", 2],
    ["ParentJob", 1],
    ["ParentJob", 0],
  ]);
  assert.equal(ParentJob.jobs.length, 0);
  assert.equal(HardJob.jobs.length, 3);
  ran.length = 0;
  await ParentJob.performAsync(1);
  assert.equal(await drainAll(), 3 + 2 + 2);
  assert.equal(allJobs().length, 0);
  assert.equal(ran.filter(([name]) => name === "HardJob").length, 5);
});

test("fake: clear forgets one class; a failing job leaves drain with its error and is gone", async () => {
  fake();
  await HardJob.performAsync("a", 1);
  await FailingJob.performAsync();
  await FailingJob.performAsync();
  HardJob.clear();
  assert.equal(HardJob.jobs.length, 0);
  await assert.rejects(FailingJob.drain(), /boom/);
  assert.equal(FailingJob.jobs.length, 1);
});

test("fake and inline: non-JSON args fail at push as in production", async () => {
  for (const mode of [fake, inline]) {
    mode();
    await assert.rejects(LooseJob.performAsync(new Date()), (error: Error) => {
      assert.ok(error instanceof ArgumentError);
      assert.match(error.message, /args\[0\] is a Date/);
      return true;
    });
  }
  assert.deepEqual(ran, []);
});

test("inline: perform runs at once with the args a worker would see, inside the app's middleware", async (t) => {
  const seen: string[] = [];
  const middleware = async (instance: object, job: { jid: string }, queue: string, next: () => Promise<void>) => {
    seen.push(`${instance.constructor.name} ${queue} ${(instance as Job).jid === job.jid}`);
    await next();
  };
  configureServer((config) => config.middleware.add(middleware));
  // The app's registration is the process's: this test takes its middleware out again when it ends.
  t.after(() => configureServer((config) => config.middleware.remove(middleware)));
  inline();
  const jid = await LooseJob.performAsync({ nested: [1, "two", null], flag: true });
  assert.ok(jid);
  assert.deepEqual(ran, [["LooseJob", { nested: [1, "two", null], flag: true }]]);
  await ParentJob.performIn(3600, 1); // scheduled jobs run at once too, and so do the jobs they push
  assert.equal(ran.filter(([name]) => name === "ParentJob").length, 2);
  assert.equal(ran.filter(([name]) => name === "HardJob").length, 2);
  assert.deepEqual(seen.slice(0, 2), ["LooseJob default true", "ParentJob default true"]);
  await assert.rejects(FailingJob.performAsync(), /boom/);
});

test("inline: the job factory builds the instance", async () => {
  class Service {
    greet(name: string): string {
      return `hi ${name}`;
    }
  }
  class GreetJob extends Job {
    service?: Service;
    perform(name: string): void {
      ran.push([this.service?.greet(name)]);
    }
  }
  inline({ jobFactory: (Class) => Object.assign(new Class(), { service: new Service() }) });
  await GreetJob.performAsync("ada");
  assert.deepEqual(ran, [["hi ada"]]);
});

test("disable: pushes reach Redis; the mode stays with a default client the app replaces", async () => {
  fake();
  configureClient(new Client({ redis: redis.url }));
  await HardJob.performAsync("held", 1);
  assert.equal(HardJob.jobs.length, 1);
  disable();
  const jid = await HardJob.performAsync("real", 2);
  const [stored] = await redis.redis.lrange(queueKey("default"), 0, -1);
  assert.equal(JSON.parse(stored!).jid, jid);
  assert.equal(defaultClient().diversion?.active, false);
});
