/**
 * The features a job uses run in fake and inline modes too, without Redis (no test here starts one):
 * `this.progress` is recorded for progressOf(jid); a durable job runs its steps once, its sleeps
 * end at once, its waits park it until the test's signal() (or time out at once with a timeout of 0),
 * and a step's ctx.tx says it needs a real worker.
 */
import { afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { Job, DurableJob, signal, EventTimeoutError } from "tsq";
import { fake, inline, disable, clearAll, progressOf } from "tsq/testing";
import { ArgumentError } from "../../src/wire/errors.js";

afterEach(() => {
  clearAll();
  disable();
});

class ReportingJob extends Job {
  perform(items: number): void {
    for (let i = 1; i <= items; i++) this.progress((100 * i) / items, { done: i });
  }
}

class BadProgressJob extends Job {
  perform(): void {
    this.progress(Number.NaN);
  }
}

const calls = new Map<string, number>();
const seen: string[] = [];

class OrderJob extends DurableJob {
  async perform(id: string): Promise<void> {
    const charged = await this.step("charge", () => {
      calls.set(id, (calls.get(id) ?? 0) + 1);
      return `charged ${id}`;
    });
    await this.sleep(30 * 86_400);
    const carrier = await this.waitFor<string>(`shipped:${id}`, { timeout: 86_400 });
    seen.push(`${charged}, shipped by ${carrier}`);
  }
}

class ImpatientJob extends DurableJob {
  async perform(id: string): Promise<void> {
    try {
      await this.waitFor(`never:${id}`, { timeout: 0 });
    } catch (error) {
      seen.push(error instanceof EventTimeoutError ? `timed out ${id}` : `other ${String(error)}`);
    }
  }
}

class TxJob extends DurableJob {
  async perform(): Promise<void> {
    await this.step("write", ({ tx }) => {
      tx.set("k", "v");
    });
  }
}

test("fake: drain() runs a job that reports progress, recorded per jid", async () => {
  fake();
  const jid = await ReportingJob.performAsync(2);
  assert.equal(await ReportingJob.drain(), 1);
  assert.deepEqual(
    progressOf(jid!).map(({ n, data }) => ({ n, data })),
    [
      { n: 50, data: { done: 1 } },
      { n: 100, data: { done: 2 } },
    ],
  );
  assert.ok(progressOf(jid!).every(({ at }) => Math.abs(at - Date.now() / 1000) < 60));
  assert.deepEqual(progressOf("no-such-jid"), []);
  clearAll();
  assert.deepEqual(progressOf(jid!), [], "clearAll forgets it");
});

test("inline: progress is recorded, and a bad report fails as it would in a worker", async () => {
  inline();
  const jid = await ReportingJob.performAsync(4);
  assert.deepEqual(
    progressOf(jid!).map(({ n }) => n),
    [25, 50, 75, 100],
  );
  await assert.rejects(BadProgressJob.performAsync(), (error: unknown) => {
    assert.ok(error instanceof ArgumentError);
    assert.match(error.message, /n must be a finite number \(got NaN\)/);
    return true;
  });
});

test("inline: a durable job's step runs once across its executions, a month's sleep ends at once", async () => {
  inline();
  seen.length = 0;
  await OrderJob.performAsync("a"); // parked at its wait: the push resolves
  assert.deepEqual(seen, []);
  assert.equal(calls.get("a"), 1);
  assert.equal(await signal("shipped:a", "ups"), 1);
  assert.deepEqual(seen, ["charged a, shipped by ups"]);
  assert.equal(calls.get("a"), 1, "the step was replayed, not run again");
  assert.equal(await signal("shipped:a", "ups"), 0, "nobody waits any more");
});

test("fake: a parked job comes back held after the signal, and drain() finishes it", async () => {
  fake();
  seen.length = 0;
  await OrderJob.performAsync("b");
  assert.equal(await OrderJob.drain(), 1);
  assert.equal(OrderJob.jobs.length, 0, "parked: not held");
  assert.equal(await signal("shipped:b", "dhl"), 1);
  assert.equal(OrderJob.jobs.length, 1, "the signal pushed it back");
  assert.equal(await OrderJob.drain(), 1);
  assert.deepEqual(seen, ["charged b, shipped by dhl"]);
  assert.equal(calls.get("b"), 1);
});

test("a wait with a timeout of 0 times out at once; clearAll() forgets kept signals", async () => {
  inline();
  seen.length = 0;
  await ImpatientJob.performAsync("c");
  assert.deepEqual(seen, ["timed out c"]);
  await signal("shipped:d", "kept");
  clearAll();
  await OrderJob.performAsync("d");
  assert.deepEqual(seen, ["timed out c"], "the signal sent before clearAll was forgotten: the job parked");
});

test("a step's ctx.tx needs Redis: it says to use startTestWorker", async () => {
  inline();
  await assert.rejects(TxJob.performAsync(), /ctx\.tx\.set\(\) needs Redis.*startTestWorker/);
});

class NapJob extends DurableJob {
  // NaN is no JSON: "NaN" stands for it in the arguments.
  async perform(seconds: number | "NaN", waitSeconds: number): Promise<void> {
    await this.sleep(seconds === "NaN" ? Number.NaN : seconds);
    try {
      await this.waitFor(`nap:${this.jid}`, { timeout: waitSeconds });
    } catch (error) {
      if (!(error instanceof EventTimeoutError)) throw error;
    }
    seen.push(`slept ${seconds}`);
  }
}

test("durable durations: 0, a month and a year are taken; negative, NaN and past 10 years are refused", async () => {
  inline();
  seen.length = 0;
  for (const seconds of [0, 30 * 86_400, 365 * 86_400]) await NapJob.performAsync(seconds, 0);
  assert.deepEqual(seen, ["slept 0", `slept ${30 * 86_400}`, `slept ${365 * 86_400}`]);
  await assert.rejects(NapJob.performAsync(-1, 0), /sleep\(seconds\) must be seconds >= 0, got -1/);
  await assert.rejects(NapJob.performAsync("NaN", 0), /sleep\(seconds\) must be a number of seconds >= 0, got NaN/);
  await assert.rejects(NapJob.performAsync(3e9, 0), /sleep\(seconds\) of 3000000000 s is over the longest allowed/);
  await assert.rejects(NapJob.performAsync(0, -1), /waitFor\("nap:\w+", \{ timeout \}\) must be seconds >= 0, got -1/);
  await assert.rejects(NapJob.performAsync(0, 3e9), /\{ timeout \}\) of 3000000000 s is over the longest allowed/);
  await assert.rejects(signal("e", null, { retention: 3e9 }), /retention is whole seconds from 1 to 315360000/);
});
