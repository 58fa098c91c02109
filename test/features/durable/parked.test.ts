/**
 * Parked durable jobs made visible: `ParkedJobs` (tsq/api), `tsqctl waiting` and the dashboard's
 * `/waiting`, over jobs a real worker parked (one waiting on an event, one sleeping) and one entry with
 * hostile text written straight into Redis; `tsqctl cancel` of a plain job says what happened to it and
 * nothing about iterations.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../../helpers/tsqctl.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { ParkedJobs } from "../../../src/admin/api/index.js";
import { Client } from "../../../src/client/Client.js";
import { SleepyJob, WaitingJob } from "../../jobs/durableJobs.js";
import { startWeb, WebSession, HOSTILE_TEXT } from "../../admin/web/webHelpers.js";

const handle = useRedis();
const ESC_EVENT = "pay\x1b]52;c;aGk=\x07\u202e:1";
const HOSTILE_JID = "bad0bad0bad0bad0bad0bad0";

function tsqctl(args: string[]) {
  return runTsqctl(args, { REDIS_URL: handle.url });
}

/** A worker parks one job on an event and puts one to sleep; a hostile entry is written by hand. */
async function park(): Promise<{ waiter: string; sleeper: string; at: number }> {
  const launcher = testLauncher(handle.url, [SleepyJob, WaitingJob], { concurrency: 2, pollIntervalAverage: 0.2 });
  await launcher.start();
  try {
    const at = Date.now() / 1000;
    const waiter = (await launcher.ctx.client.push({ class: "WaitingJob", args: ["w", "shipped:42", 3600] }))!;
    const sleeper = (await launcher.ctx.client.push({ class: "SleepyJob", args: ["s", 3600] }))!;
    await eventually(async () => (await handle.redis.zcard("schedule")) === 2, 20_000, "both parked");
    const payload = JSON.stringify({ class: HOSTILE_TEXT, jid: HOSTILE_JID, queue: "default", args: [] });
    await handle.redis.zadd("schedule", Math.floor(at) + 600, payload);
    await handle.redis.hset(`tsq:durable:${HOSTILE_JID}`, "w", `${ESC_EVENT}${HOSTILE_TEXT}`, "ws", String(at));
    // A plain scheduled job (no journal) is not a parked durable job.
    await launcher.ctx.client.push({ class: "Plain", args: [], at: at + 600 });
    return { waiter, sleeper, at };
  } finally {
    await launcher.stop();
  }
}

test("ParkedJobs, tsqctl waiting and /waiting list waiting and sleeping jobs, escaped", async (t) => {
  const { waiter, sleeper, at } = await park();

  const list = await new ParkedJobs(handle.redis).list();
  assert.deepEqual(
    list.waiting.map((w) => [w.jid, w.class, w.event]).sort(),
    [
      [HOSTILE_JID, HOSTILE_TEXT, `${ESC_EVENT}${HOSTILE_TEXT}`],
      [waiter, "WaitingJob", "shipped:42"],
    ].sort(),
  );
  const mine = list.waiting.find((w) => w.jid === waiter)!;
  assert.ok(Math.abs(mine.since - at) < 30, `since is when it parked (${mine.since} vs ${at})`);
  assert.ok(Math.abs(mine.deadline - (at + 3600)) < 30, "deadline is the wait's timeout");
  assert.equal(list.sleeping.length, 1, "the plain scheduled job is not listed");
  assert.equal(list.sleeping[0]!.jid, sleeper);
  assert.equal(list.sleeping[0]!.class, "SleepyJob");
  assert.ok(Math.abs(list.sleeping[0]!.wakeAt - (at + 3600)) < 30, "wake time");
  assert.equal(list.truncated, false);
  const one = await new ParkedJobs(handle.redis).list({ limit: 1 });
  assert.equal(one.waiting.length, 1);
  assert.equal(one.truncated, true);
  await assert.rejects(new ParkedJobs(handle.redis).list({ limit: 0 }), /limit must be a whole number/);

  const text = await tsqctl(["waiting"]);
  assert.equal(text.exitCode, 0, text.stderr);
  assert.match(text.stdout, /waiting on an event \(2\)/);
  assert.match(text.stdout, new RegExp(`${waiter}\\s+WaitingJob\\s+shipped:42`));
  assert.match(text.stdout, new RegExp(`sleeping \\(1\\):[\\s\\S]*${sleeper}\\s+SleepyJob`));
  assert.ok(text.stdout.includes("pay\\x1b]52;c;aGk=\\x07\\u202e:1"), "control characters shown escaped");
  // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
  assert.ok(!/[\x07\x1b\u202e]/.test(text.stdout), "no raw control character reaches the terminal");
  const json = JSON.parse((await tsqctl(["waiting", "--json"])).stdout) as {
    waiting: { jid: string; event: string; deadline: number }[];
    sleeping: { jid: string; wake_at: number }[];
  };
  assert.equal(json.waiting.find((w) => w.jid === waiter)?.event, "shipped:42");
  assert.equal(json.sleeping[0]?.jid, sleeper);

  const web = await startWeb({ redis: handle.redis });
  t.after(() => web.stop());
  const { status, body } = await new WebSession(web.url).get("/waiting");
  assert.equal(status, 200);
  assert.match(body, /Waiting on an event \(2\)/);
  assert.match(body, /<a class="tab active" href="\/waiting">Waiting<\/a>/, "its own tab, marked");
  const home = await new WebSession(web.url).get("/");
  assert.match(
    home.body,
    /<a class="tab" href="\/scheduled">Scheduled<\/a><a class="tab" href="\/waiting">Waiting<\/a>/,
  );
  assert.ok(body.includes("shipped:42") && body.includes(waiter) && body.includes(sleeper));
  assert.ok(!body.includes("<script>window.__xss"), "hostile text escaped");
  assert.ok(body.includes("&lt;script&gt;window.__xss=1&lt;/script&gt;"));
});

test("tsqctl cancel of a plain job leads with its outcome, no iterable-job line", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const jid = (await client.push({ class: "Plain", args: [] }))!;
  const out = await tsqctl(["cancel", jid]);
  assert.equal(out.exitCode, 0, out.stderr);
  const lines = out.stdout.trimEnd().split("\n");
  assert.match(lines[0]!, new RegExp(`^${jid}: cancelled at \\d{4}-\\d\\d-\\d\\dT[^;]*$`));
  assert.equal(lines[1], `${jid}: removed from queue:default`);
  assert.equal(lines.length, 2, out.stdout);
  assert.ok(!/iterat/.test(out.stdout), `nothing about iterations: ${out.stdout}`);
  const unknown = await tsqctl(["cancel", "0123456789abcdef01234567"]);
  assert.match(unknown.stdout, /not found queued, scheduled, retrying or running/);
});
