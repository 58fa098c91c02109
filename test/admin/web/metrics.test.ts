/**
 * The Metrics pages (`/metrics`, `/metrics/:Class`) over real HTTP, reading Sidekiq 8's keys as a tsq
 * worker writes them and as Ruby Sidekiq 8 writes them (hostile class names included).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { ExecutionMetrics, averageSeconds } from "../../../src/admin/api/index.js";
import { minuteBucket, tenMinuteBucket, histogramWindow } from "../../../src/wire/executionLayout.js";
import { duration } from "../../../src/admin/web/units.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { HOSTILE, WebSession, startWeb } from "./webHelpers.js";

const handle = useRedis();

test("a tsq worker's jobs on /metrics and /metrics/:Class: runs, failures, times, histogram", async () => {
  class Quick {
    perform() {}
  }
  class Sleepy {
    async perform() {
      await new Promise((r) => setTimeout(r, 110));
    }
  }
  class Boom {
    perform() {
      throw new Error("boom");
    }
  }
  const launcher = testLauncher(handle.url, [Quick, Sleepy, Boom], { heartbeatInterval: 600 });
  const client = new Client({ redis: handle.url });
  for (let i = 0; i < 4; i++) await client.push({ class: "Quick", args: [] });
  for (let i = 0; i < 2; i++) await client.push({ class: "Sleepy", args: [] });
  await client.push({ class: "Boom", args: [], retry: false });
  await client.close();
  const started = Date.now();
  await launcher.start();
  const deadline = Date.now() + 10_000;
  while (launcher.ctx.state.unflushedCounts().processed < 7 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await launcher.stop();
  // The 1h page reads minute keys; the flush went to one minute between start and now.
  const minuteKeys = new Set<string>();
  for (let t = started; t <= Date.now() + 60_000; t += 60_000) minuteKeys.add(`j|${minuteBucket(new Date(t))}`);

  const web = await startWeb({ redis: handle.redis });
  try {
    const session = new WebSession(web.url);
    const { status, body, res } = await session.get("/metrics");
    assert.equal(status, 200, body.slice(0, 300));
    assert.equal(res.headers.get("refresh"), "60", "1h reloads every minute, as Sidekiq");
    const rows = rowsOf(body, "metrics-table");
    assert.deepEqual(
      rows.map((r) => [r[0], r[1], r[2]]),
      [
        ["Sleepy", "2", "0"],
        ["Quick", "4", "0"],
        ["Boom", "0", "1"],
      ],
      "sorted by total time, successes = p - f",
    );
    // What the page must show is what Redis holds (the minute keys the flush wrote), rounded as the page
    // rounds: how long the runs took depends on the machine's load, so it is bounded only from below.
    const held = { ms: 0, p: 0, f: 0 };
    for (const key of await handle.redis.keys("j|*")) {
      if (!minuteKeys.has(key)) continue;
      const [ms, p, f] = await handle.redis.hmget(key, "Sleepy|ms", "Sleepy|p", "Sleepy|f");
      held.ms += Number(ms ?? 0);
      held.p += Number(p ?? 0);
      held.f += Number(f ?? 0);
    }
    assert.ok(held.p === 2 && held.ms >= 218, `Sleepy in Redis: ${JSON.stringify(held)}`);
    assert.equal(rows[0]![3], duration(held.ms), "total = the ms Redis holds, in a unit");
    assert.equal(rows[0]![4], duration(averageSeconds(held) * 1000), "average = total / successes");
    assert.match(rows[0]![4], / (ms|s|min)$/, "the average has its unit");
    assert.match(body, /id="metrics-chart"/);
    assert.match(body, /href="\/metrics\/Sleepy\?period=1h"/);
    assert.ok(!(await session.get("/metrics?period=1h&substr=slee")).body.includes(">Quick<"), "substr filters");
    assert.equal((await session.get("/metrics?period=24h")).res.headers.get("refresh"), null);
    assert.deepEqual(
      rowsOf((await session.get("/metrics?period=24h")).body, "metrics-table").map((r) => r[0]),
      ["Sleepy", "Quick", "Boom"],
      "24h reads the 10-minute rollups",
    );

    const page = await session.get("/metrics/Sleepy?period=72h");
    assert.equal(page.status, 200);
    assert.match(page.body, /class="btn active" href="\/metrics\/Sleepy\?period=8h"/, "a class page stops at 8h");
    const histogram = /data-series="([^"]*)"/.exec(page.body.slice(page.body.indexOf("histogram-chart")))?.[1];
    const series = JSON.parse(histogram!.replaceAll("&quot;", '"')) as { labels: string[]; values: number[] };
    // Each run slept 110 ms: both land in the 100–150 ms bucket or, on a loaded machine, a later one;
    // never an earlier one.
    assert.equal(series.labels[5], "150ms");
    assert.deepEqual(series.values.slice(0, 5), [0, 0, 0, 0, 0], "no run under 100 ms");
    assert.equal(
      series.values.slice(5).reduce((a, b) => a + b, 0),
      2,
      "two runs from the 100–150 ms bucket on",
    );
    // The table has a column for each bucket holding runs: the first is where the runs landed.
    const landed = series.labels[series.values.findIndex((count) => count > 0)]!;
    assert.ok(page.body.includes(`<th>${landed}</th>`), `a column for the ${landed} bucket`);
    assert.match((await session.get("/metrics/Nobody")).body, /No metrics for this class/);
  } finally {
    await web.stop();
  }
});

test("Ruby Sidekiq 8's keys, hostile class names escaped, deploy marks, and the API's buckets", async () => {
  const now = new Date();
  const hostile = HOSTILE[1]!;
  const { redis } = handle;
  for (const key of [`j|${minuteBucket(now)}`, `j|${tenMinuteBucket(now)}`])
    await redis.hset(key, `${hostile}|ms`, "1500", `${hostile}|p`, "3", `${hostile}|f`, "1", "Ruby::Mailer|p", "1");
  await redis.call("BITFIELD", `h|${hostile}-${histogramWindow(now)}`, "INCRBY", "u16", "#10", "2");
  const day = now.toISOString().slice(0, 10).replaceAll("-", "");
  const mark = new Date(Math.floor(now.getTime() / 60_000) * 60_000 - 120_000).toISOString().replace(".000Z", "Z");
  await redis.hset(`${day}-marks`, mark, HOSTILE[0]!);

  const top = await new ExecutionMetrics(redis).top("1h", "", now);
  assert.equal(top.buckets.length, 60);
  assert.deepEqual(top.classes.get(hostile)?.series.p.at(-1), 3, "the newest bucket is last");
  assert.equal(top.classes.get("Ruby::Mailer")?.ms, 0);
  if (now.getUTCMinutes() >= 2 || now.getUTCHours() > 0) assert.equal(top.marks[0]?.label, HOSTILE[0]);
  const one = await new ExecutionMetrics(redis).forClass(hostile, "1h", now);
  assert.equal(one.classes.get(hostile)?.histograms?.at(-1)?.[10], 2);

  const web = await startWeb({ redis });
  try {
    const session = new WebSession(web.url);
    for (const path of ["/metrics", `/metrics/${encodeURIComponent(hostile)}`, "/metrics?substr=%3Cscript%3E"]) {
      const { status, body } = await session.get(path);
      assert.equal(status, 200, path);
      for (const bad of HOSTILE.slice(0, 2)) assert.ok(!body.includes(bad), `${path} shows ${bad} unescaped`);
    }
    const list = (await session.get("/metrics")).body;
    assert.ok(list.includes(`href="/metrics/${encodeURIComponent(hostile)}?period=1h"`), "the link is encoded");
    assert.deepEqual(rowsOf(list, "metrics-table")[0]!.slice(1), ["2", "1", "1.5 s", "750 ms"]);
    assert.match(list, /Ruby::Mailer/);
    const one = (await session.get(`/metrics/${encodeURIComponent(hostile)}`)).body;
    assert.match(one, /<th>1.1s<\/th>/, "bucket 10 (750 ms up to 1.1 s) is shown");
  } finally {
    await web.stop();
  }
});

test("durations read in the largest unit they reach, to 3 digits, and a small one never as 0", () => {
  for (const [ms, text] of [
    [0, "0"],
    [0.012, "12 µs"],
    [0.0004, "0.4 µs"],
    [0.09, "90 µs"],
    [0.4, "0.4 ms"],
    [12.345, "12.3 ms"],
    [999, "999 ms"],
    [1500, "1.5 s"],
    [90_000, "1.5 min"],
    [7_200_000, "2 h"],
    [Number.NaN, "–"],
  ] as const)
    assert.equal(duration(ms), text, String(ms));
});

/** The text of each body row's cells in the table with `id`. */
function rowsOf(body: string, id: string): string[][] {
  const table = body.slice(body.indexOf(`id="${id}"`));
  const tbody = table.slice(table.indexOf("<tbody>"), table.indexOf("</tbody>"));
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) =>
    [...m[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) =>
      c[1]!
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim(),
    ),
  );
}
