/**
 * Workers started from code: lifecycle and events, a job factory, bad settings named, two workers in
 * one process with their own settings, nothing left running after stop.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { Worker, type JobEndInfo } from "../../src/library/Worker.js";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";

const handle = useRedis();

async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

class Greeter {
  constructor(readonly greeting: string) {}
}

class GreetJob extends Job {
  greeter?: Greeter;
  static seen: string[] = [];
  perform(name: string) {
    GreetJob.seen.push(`${this.greeter?.greeting ?? "no greeter"} ${name}`);
  }
}

class FailJob extends Job {
  static override options = { retry: false };
  perform() {
    throw new Error("boom");
  }
}

class ChainJob extends Job {
  async perform() {
    // Pushes through the worker's own client (its Redis), not the process default.
    await GreetJob.set({ queue: "chained" }).performAsync("from a job");
  }
}

test("start, events for each job, a job factory, stop: and nothing of the worker is left running", async () => {
  const worker = new Worker({
    redis: handle.url,
    jobs: [GreetJob, FailJob, ChainJob],
    queues: ["default", "chained"],
    concurrency: 2,
    jobFactory: (Class) => Object.assign(new Class(), { greeter: new Greeter("hello") }),
  });
  const ends: JobEndInfo[] = [];
  const starts: string[] = [];
  let started = 0;
  let stopped = 0;
  worker.on("started", () => started++);
  worker.on("stopped", () => stopped++);
  worker.on("job:start", ({ class: name }) => starts.push(name));
  worker.on("job:end", (info) => ends.push(info));
  await worker.start();
  assert.equal(started, 1);
  const client = new Client({ redis: handle.url });
  const ok = await client.push({ class: GreetJob, args: ["ada"] });
  const bad = await client.push({ class: FailJob, args: [] });
  await client.push({ class: ChainJob, args: [] });
  await client.close();
  await until(() => ends.length === 4);
  await worker.stop({ timeout: 1 });
  assert.equal(stopped, 1);
  assert.deepEqual(GreetJob.seen.sort(), ["hello ada", "hello from a job"]);
  assert.equal(ends.find((e) => e.jid === ok)?.status, "done");
  const failed = ends.find((e) => e.jid === bad);
  assert.equal(failed?.status, "dead");
  // retry: false discards the job, as Sidekiq does: it is not kept in the dead set.
  assert.equal(failed?.disposition, "dropped");
  assert.ok(starts.includes("ChainJob"));
  // The process record is gone and the worker's connections are closed.
  assert.equal(await handle.redis.sismember("processes", worker.identity), 0);
  await until(() => worker.launcher.ctx.redis.status === "end", 5_000);
  await worker.stop(); // idempotent
  await assert.rejects(worker.start(), /already stopped/);
});

test("bad settings are refused with the setting's name", () => {
  assert.throws(() => new Worker({ redis: handle.url, jobs: [] }), /jobs.*no job class/);
  assert.throws(
    () => new Worker({ redis: handle.url, jobs: [GreetJob, {}] as unknown as [typeof GreetJob] }),
    /jobs\[1\] is not a job class/,
  );
  assert.throws(
    () => new Worker({ redis: handle.url, jobs: [GreetJob], concurrency: 0 }),
    /`concurrency` must be an integer from 1/,
  );
  assert.throws(() => new Worker({ redis: handle.url, jobs: [GreetJob], timeout: 3e9 }), /`timeout` must be/);
  assert.throws(() => new Worker({ redis: handle.url, jobs: [GreetJob], queues: ["a\nb"] }), /queues\[0\]/);
  assert.throws(() => new Worker({ redis: handle.url, jobs: [GreetJob], fetch: "fast" as never }), /`fetch` must be/);
});

test("a module's exports are accepted as `jobs`; weighted queues", async () => {
  const worker = new Worker({
    redis: handle.url,
    jobs: { GreetJob, helper: () => 1, VERSION: "1" },
    queues: [
      ["high", 3],
      ["low", 1],
    ],
    fetch: "reliable",
  });
  // Job classes only (plug-ins may register their own internal classes beside them).
  const names = worker.launcher.ctx.registry.names();
  assert.ok(names.includes("GreetJob"));
  assert.ok(!names.includes("helper") && !names.includes("VERSION"));
  assert.deepEqual(worker.launcher.ctx.options.capsules[0]!.queues, [
    { name: "high", weight: 3 },
    { name: "low", weight: 1 },
  ]);
  await worker.start();
  await worker.stop();
  assert.equal(await handle.redis.sismember("super_processes", worker.identity), 0);
});

test("two workers with their own `configure`: each runs its own middleware and lifecycle handlers", async () => {
  const seen: string[] = [];
  const tagging = (tag: string) => (_instance: object, job: { jid: string }, _queue: string, next: () => unknown) => {
    seen.push(`${tag}:${job.jid}`);
    return next();
  };
  const workers = ["one", "two"].map(
    (tag) =>
      new Worker({
        redis: handle.url,
        jobs: [GreetJob],
        queues: [tag],
        configure: (config) => {
          config.middleware.add(tagging(tag));
          config.on("startup", () => void seen.push(`${tag}:startup`));
          config.on("shutdown", () => void seen.push(`${tag}:shutdown`));
        },
      }),
  );
  for (const worker of workers) await worker.start();
  const client = new Client({ redis: handle.url });
  const first = await client.push({ class: GreetJob, args: ["a"], queue: "one" });
  const second = await client.push({ class: GreetJob, args: ["b"], queue: "two" });
  await client.close();
  await until(() => seen.length === 4);
  for (const worker of workers) await worker.stop({ timeout: 1 });
  assert.deepEqual(seen.sort(), [
    `one:${first}`,
    "one:shutdown",
    "one:startup",
    `two:${second}`,
    "two:shutdown",
    "two:startup",
  ]);
  assert.throws(
    () => new Worker({ redis: handle.url, jobs: [GreetJob], configure: "yes" as never }),
    /`configure` must be a function/,
  );
});
