/**
 * Paced "retry all" over real HTTP: the dead set drains at the asked pace in the background, `/bulk`
 * shows progress and cancels it between batches without losing an entry, every step leaves an audit
 * line, and read-only / bad input / a second run on the same set are refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { DEAD, RETRY } from "../../../src/wire/keys.js";
import { DeadSet } from "../../../src/admin/api/index.js";
import { useRedis } from "../../helpers/redis.js";
import { WebSession, jidOf, startWeb } from "./webHelpers.js";
import { withinDeadline } from "../../helpers/timing.js";

const handle = useRedis();

async function fill(set: string, n: number, error: Record<string, string> = {}, prefix = "p"): Promise<void> {
  const now = Date.now() / 1000;
  const args: string[] = [];
  for (let i = 0; i < n; i++) {
    const job = {
      class: "FailJob",
      args: [i],
      jid: jidOf(prefix, i),
      queue: "default",
      retry: true,
      retry_count: 3,
      ...error,
    };
    args.push((now - n + i).toFixed(3), JSON.stringify(job));
  }
  await handle.redis.zadd(set, ...args);
}

const queued = () => handle.redis.llen("queue:default");

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

test("tsq/api: retryAll at a pace takes total/pace seconds and reports progress", async () => {
  await fill(DEAD, 300);
  const seen: number[] = [];
  const started = performance.now();
  const done = await new DeadSet(handle.redis).retryAll({ perSecond: 200, onProgress: (n) => seen.push(n) });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(done, 300);
  assert.equal(await queued(), 300);
  // 300 at 200/s: the last batch is taken at about 1.4 s.
  withinDeadline(seconds * 1000, 1500, "300 at 200/s", 1200);
  assert.equal(seen.at(-1), 300);
  assert.ok(seen.length >= 10, `progress after each batch: ${seen.length} reports`);
  const job = JSON.parse((await handle.redis.lindex("queue:default", 0))!) as { retry_count: number };
  assert.equal(job.retry_count, 2, "as an unpaced retry: retry_count - 1");
});

test("a paced retry all from the dashboard: progress on /bulk, cancel keeps every entry, audit lines", async () => {
  await fill(DEAD, 400);
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const web = await startWeb({ redis: handle.redis, logger });
  try {
    const session = new WebSession(web.url);
    const morgue = (await session.get("/morgue")).body;
    assert.match(morgue, /<input\s+type="number"\s+name="pace"/);
    const token = await session.token("/morgue");
    const bad = await session.post("/morgue/all/retry", [
      ["authenticity_token", token],
      ["pace", "0"],
    ]);
    assert.equal(bad.status, 400);
    const started = await session.post("/morgue/all/retry", [
      ["authenticity_token", token],
      ["pace", "100"],
    ]);
    assert.equal(started.status, 303);
    assert.equal(started.location, "/bulk");
    const again = await session.post("/morgue/all/retry", [
      ["authenticity_token", token],
      ["pace", "100"],
    ]);
    assert.equal(again.status, 409, "one paced retry per set at a time");

    await new Promise((r) => setTimeout(r, 1000));
    const afterOne = await queued();
    assert.ok(afterOne >= 80 && afterOne <= 160, `about 100 in the first second, got ${afterOne}`);
    const page = await session.get("/bulk");
    assert.equal(page.res.headers.get("refresh"), "2", "reloads while running");
    assert.match(page.body, /<span class="badge">running<\/span>/);
    assert.match((await session.get("/morgue")).body, /Retrying at 100\/s/);
    const id = /data-id="([0-9a-f]+)"/.exec(page.body)?.[1];
    assert.ok(id);
    const cancel = await session.post(`/bulk/${id}/cancel`, [["authenticity_token", token]]);
    assert.equal(cancel.status, 303);
    await until(async () => (await session.get("/bulk")).body.includes(">cancelled<"));
    const [left, moved] = [await handle.redis.zcard(DEAD), await queued()];
    assert.equal(left + moved, 400, `nothing lost: ${left} left + ${moved} queued`);
    assert.ok(left > 150, `cancelled well before the end: ${left} left`);
    const shown = /<span class="done">([\d,]+)<\/span>/.exec((await session.get("/bulk")).body)?.[1];
    assert.equal(Number(shown?.replace(/,/g, "")), moved, "the page shows what was retried");
    assert.equal((await session.post(`/bulk/${id}/cancel`, [["authenticity_token", token]])).status, 404);

    const audits = lines.filter((l) => l.audit === true).map((l) => [l.action, l.target]);
    assert.deepEqual(audits, [
      ["paced retry at 100/s", "Dead"],
      ["cancel paced retry", "Dead"],
      ["paced retry cancelled", "Dead"],
    ]);
    assert.equal(lines.find((l) => l.action === "paced retry at 100/s")?.count, 400);
    assert.equal(lines.find((l) => l.action === "paced retry cancelled")?.count, moved);
  } finally {
    await web.stop();
  }
});

test("a paced retry runs to the end; without a pace retry all is immediate; stop() ends a run", async () => {
  await fill(RETRY, 60);
  const web = await startWeb({ redis: handle.redis });
  try {
    const session = new WebSession(web.url);
    const token = await session.token("/retries");
    await session.post("/retries/all/retry", [
      ["authenticity_token", token],
      ["pace", "500"],
    ]);
    await until(async () => (await session.get("/bulk")).body.includes(">done<"));
    assert.equal(await queued(), 60);
    assert.equal((await session.get("/bulk")).res.headers.get("refresh"), null);
    await fill(RETRY, 10);
    const now = await session.post("/retries/all/retry", [
      ["authenticity_token", token],
      ["pace", ""],
    ]);
    assert.equal(now.location, "/retries");
    assert.equal(await handle.redis.zcard(RETRY), 0);
  } finally {
    await web.stop();
  }
  await handle.redis.del("queue:default");
  await fill(DEAD, 200);
  const other = await startWeb({ redis: handle.redis });
  const session = new WebSession(other.url);
  const token = await session.token("/morgue");
  await session.post("/morgue/all/retry", [
    ["authenticity_token", token],
    ["pace", "50"],
  ]);
  await other.stop(); // the handler's stop() ends the run between batches and waits for the last one
  const [left, moved] = [await handle.redis.zcard(DEAD), await queued()];
  assert.equal(left + moved, 200, "nothing lost");
  assert.ok(left > 150, `stopped early: ${left} left`);
  const readOnly = await startWeb({ redis: handle.redis, readOnly: true });
  try {
    const page = (await new WebSession(readOnly.url).get("/morgue")).body;
    assert.ok(!page.includes('name="pace"'), "read-only shows no pace field");
  } finally {
    await readOnly.stop();
  }
});

test("a failure group retried at a pace: only that group, in the background", async () => {
  await fill(DEAD, 120, { error_class: "Timeout", error_message: "after 3012 ms" }, "t");
  await fill(DEAD, 30, { error_class: "KeyError", error_message: "key not found: 'x'" }, "k");
  const web = await startWeb({ redis: handle.redis });
  try {
    const session = new WebSession(web.url);
    const page = (await session.get("/failures")).body;
    assert.match(page, /name="pace"/);
    const token = await session.token("/failures");
    const started = performance.now();
    const res = await session.post("/failures", [
      ["authenticity_token", token],
      ["set", "morgue"],
      ["signature", "Timeout: after N ms"],
      ["retry", "1"],
      ["pace", "100"],
    ]);
    assert.equal(res.location, "/bulk");
    await until(async () => (await session.get("/bulk")).body.includes(">done<"));
    const seconds = (performance.now() - started) / 1000;
    withinDeadline(seconds * 1000, 1200, "120 at 100/s", 1000);
    assert.equal(await queued(), 120);
    assert.equal(await handle.redis.zcard(DEAD), 30, "the other group stays");
  } finally {
    await web.stop();
  }
});
