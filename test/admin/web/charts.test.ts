/**
 * The Dashboard's charts (src/admin/web/assets.ts, assets/charts.js): uPlot served from its npm package
 * with the right headers and nothing else reachable through `/assets/`; and in headless Chromium, in a
 * time zone far from UTC, the history and live charts drawn with time axes in local time, a count axis
 * and a legend, without a CSP violation or a console error. Browser tests are skipped, saying why, when
 * Chromium is missing (CI installs it).
 */
import { test, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { chromium, type Browser, type Page } from "playwright-core";
import { STAT_FAILED, STAT_PROCESSED, dailyStatKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { watchPage } from "../../helpers/browser.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { startWeb, type WebHandle } from "./webHelpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const skip = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
/** 7 or 8 hours behind UTC: a label in UTC, or a day shifted by the offset, cannot pass for local. */
const ZONE = "America/Los_Angeles";
const DAY_MS = 86_400_000;

const redis = useRedis();
let web: WebHandle;
let browser: Browser | undefined;

// The private Redis is up once a test runs (not yet when a file-level before hook would run).
beforeEach(async () => {
  web ??= await startWeb({ redis: redis.redis });
});

after(async () => {
  await browser?.close();
  await web?.stop();
});

/** A raw GET that sends the path exactly as given (fetch would resolve the `..` segments itself). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${web.url}${path}`, { path }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("uPlot and the chart script are served from the package, typed, cacheable for 5 min", async () => {
  for (const [path, type, marker] of [
    ["/assets/uplot.min.js", "text/javascript; charset=utf-8", "uPlot"],
    ["/assets/uplot.min.css", "text/css; charset=utf-8", ".uplot"],
    ["/assets/charts.js", "text/javascript; charset=utf-8", "timeChart"],
  ] as const) {
    const res = await fetch(web.url + path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), type, path);
    assert.equal(res.headers.get("cache-control"), "public, max-age=300", path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.ok((await res.text()).includes(marker), `${path} holds ${marker}`);
  }
  const head = await fetch(`${web.url}/assets/uplot.min.js`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal((await head.text()).length, 0, "HEAD sends no body");
  const page = await (await fetch(`${web.url}/`)).text();
  for (const asset of ["uplot.min.css", "uplot.min.js", "charts.js"])
    assert.ok(page.includes(`/assets/${asset}" nonce=`), `the page loads ${asset} from the dashboard, with its nonce`);
});

test("only the listed asset names are served: traversal and uPlot's other files are 404", async () => {
  for (const path of [
    "/assets/../package.json",
    "/assets/..%2f..%2fpackage.json",
    "/assets/%2e%2e/%2e%2e/package.json",
    "/assets/..%5c..%5cpackage.json",
    "/assets/uPlot.iife.min.js",
    "/assets/uplot.min.js/../../package.json",
    "/assets/uplot.min.js%00.css",
    "/assets/__proto__",
    "/assets/constructor",
    "/assets/",
  ]) {
    const res = await rawGet(path);
    assert.equal(res.status, 404, `${path}: ${res.status}`);
    assert.ok(!res.body.includes('"dependencies"'), `${path} leaks no file`);
  }
});

test("the history is numbers in a data attribute, and says so when there is nothing to draw", async () => {
  const empty = await (await fetch(`${web.url}/?days=7`)).text();
  assert.ok(empty.includes("No job was processed or failed in these 7 days."));
  assert.ok(!empty.includes('id="history-chart"'));
  await redis.redis.set(dailyStatKey(STAT_PROCESSED, new Date()), "40");
  const page = await (await fetch(`${web.url}/?days=7`)).text();
  const attribute = /id="history-chart" class="chart" data-series="([^"]*)"/.exec(page)?.[1];
  assert.ok(attribute, "the history chart's data");
  const series = JSON.parse(attribute.replaceAll("&quot;", '"')) as Record<string, unknown[]>;
  assert.equal(series.dates!.length, 7);
  assert.ok([...series.processed!, ...series.failed!].every((n) => typeof n === "number"));
  assert.equal(series.processed!.at(-1), 40, "today is last");
});

async function newPage(problems: string[]): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  const context = await browser.newContext({ timezoneId: ZONE, viewport: { width: 1280, height: 900 } });
  const page = await watchPage(await context.newPage(), problems);
  return page;
}

/** Seconds since local midnight in ZONE of an "HH:mm:ss" label, and of now. */
const secondsOf = (label: string) => label.split(":").reduce((sum, part) => sum * 60 + Number(part), 0);
function zoneNowSeconds(): number {
  const text = new Intl.DateTimeFormat("en-GB", {
    timeZone: ZONE,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).format(new Date());
  return secondsOf(text);
}

test(
  "in Chromium: both charts have a local time axis, a count axis and a legend; live draws from its first polls",
  { skip, timeout: 60_000 },
  async () => {
    const now = new Date();
    await redis.redis.set(dailyStatKey(STAT_PROCESSED, now), "40");
    await redis.redis.set(dailyStatKey(STAT_FAILED, now), "3");
    await redis.redis.set(dailyStatKey(STAT_PROCESSED, new Date(now.getTime() - 2 * DAY_MS)), "12");
    await redis.redis.set(STAT_PROCESSED, "52");
    const problems: string[] = [];
    const page = await newPage(problems);
    await page.goto(`${web.url}/?days=7&interval=2`);

    const history = page.locator("#history-chart");
    await history.locator("canvas").waitFor();
    assert.equal(await history.locator(".u-axis").count(), 2, "history: an x and a y axis");
    const historyLegend = await history.locator(".u-legend").innerText();
    assert.match(historyLegend, /processed/);
    assert.match(historyLegend, /failed/);
    const days = JSON.parse((await history.getAttribute("data-x-labels")) ?? "[]") as string[];
    // Today's counter is the UTC date; its label must name that date in Los Angeles too.
    const today = now.toLocaleString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
    assert.ok(days.includes(today), `history labels ${JSON.stringify(days)} name ${today}`);
    assert.equal(new Set(days).size, days.length, "one tick per day at most");

    const live = page.locator("#live-chart");
    await live.locator("canvas").waitFor();
    await eventually(
      async () => Number(await live.getAttribute("data-points")) >= 1,
      20_000,
      "a point on the live chart after the second poll",
      200,
    );
    assert.equal(await live.locator(".u-axis").count(), 2, "live: an x and a y axis");
    assert.match(await live.locator(".u-legend").innerText(), /processed[\s\S]*failed/);
    const times = JSON.parse((await live.getAttribute("data-x-labels")) ?? "[]") as string[];
    assert.ok(times.length >= 2, `live time labels: ${JSON.stringify(times)}`);
    for (const label of times) {
      assert.match(label, /^\d{2}:\d{2}:\d{2}$/);
      // Within 2 min of the time in Los Angeles (modulo midnight); UTC would be 7–8 h away.
      const off = Math.abs(secondsOf(label) - zoneNowSeconds());
      assert.ok(Math.min(off, 86_400 - off) < 120, `${label} is local time in ${ZONE}`);
    }

    const csp = await page.evaluate<string[]>("window.__csp");
    assert.deepEqual(csp, [], "no CSP violation");
    assert.deepEqual(problems, [], "no console error");
    await page.context().close();
  },
);
