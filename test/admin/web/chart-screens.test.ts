/**
 * Every chart reads at a glance, in headless Chromium in a time zone far from UTC: the Dashboard's Live
 * chart (an empty state at load, then time ticks to the second in local time after some seconds of a
 * real worker's traffic), the History, the Metrics page (local time ticks, a value axis in a unit, a
 * legend naming the classes, averages with units that never read "0") and a class's two charts; and a
 * job's page shows its stored outcome (hostile text as text) and its progress while it runs. Each page is
 * checked for CSP violations and console errors, and screenshotted into a temp dir (and into
 * TSQ_SCREENSHOT_DIR when set, to keep them), the paths printed as diagnostics. Skipped, saying why,
 * without Chromium.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { Client } from "../../../src/client/Client.js";
import { Job } from "../../../src/client/Job.js";
import { Worker } from "../../../src/library/Worker.js";
import { ExecutionTracker } from "../../../src/server/ExecutionTracker.js";
import { RETRY, STAT_FAILED, STAT_PROCESSED, dailyStatKey, deployMarksKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { watchPage } from "../../helpers/browser.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { HOSTILE, startWeb, type WebHandle } from "./webHelpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const skip = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
/** 7 or 8 hours behind UTC: a label in UTC cannot pass for local time. */
const ZONE = "America/Los_Angeles";
/** Where the screenshots are copied for a person to look at (best effort). */
/** Where to keep the screenshots after the run (the temp dir goes with it); unset: nowhere. */
const SCREENS = process.env.TSQ_SCREENSHOT_DIR;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const redis = useRedis();
let browser: Browser | undefined;
let web: WebHandle | undefined;
let worker: Worker | undefined;
let client: Client | undefined;
const shots = mkdtempSync(join(tmpdir(), "tsq-charts-"));

/** Returns hostile text as its result: the job page must show it as text. */
class ReportJob extends Job {
  static override options = { result: { ttl: 600 } };
  perform() {
    return { note: HOSTILE[0], rows: 412 };
  }
}

/** Reports progress, then waits until the test lets it finish. */
class ImportJob extends Job {
  static release: () => void = () => {};
  async perform() {
    this.progress(40, { file: HOSTILE[1], row: 4 });
    await new Promise<void>((resolve) => (ImportJob.release = resolve));
  }
}

/** Fails with hostile text, kept as a retry: its set page shows the stored error. */
class FlakyJob extends Job {
  static override options = { result: { ttl: 600 }, retry: 3 };
  perform() {
    throw new TypeError(`no row ${HOSTILE[0]}`);
  }
}

class TickJob extends Job {
  perform() {}
}

before(async () => {
  if (skip) return;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
});

after(async () => {
  ImportJob.release();
  await worker?.stop({ timeout: 5 });
  await client?.close();
  await browser?.close();
  await web?.stop();
});

async function newPage(problems: string[]): Promise<Page> {
  const context = await browser!.newContext({ timezoneId: ZONE, viewport: { width: 1280, height: 900 } });
  return watchPage(await context.newPage(), problems);
}

/** Screenshots the page into the temp dir (and TSQ_SCREENSHOT_DIR), and prints where. */
async function shoot(t: { diagnostic(message: string): void }, page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  t.diagnostic(`screenshot ${name}: ${path}`);
  if (SCREENS === undefined) return;
  try {
    mkdirSync(SCREENS, { recursive: true });
    copyFileSync(path, join(SCREENS, `${name}.png`));
    t.diagnostic(`screenshot ${name}: ${join(SCREENS, `${name}.png`)}`);
  } catch (error) {
    t.diagnostic(`screenshot ${name}: not copied to ${SCREENS} (${(error as Error).message})`);
  }
}

async function assertClean(page: Page, problems: string[], name: string): Promise<void> {
  const state = await page.evaluate<{ csp: string[]; xss: number | null }>(
    "({ csp: window.__csp, xss: window.__xss ?? null })",
  );
  assert.deepEqual(state.csp, [], `${name}: no CSP violation`);
  assert.equal(state.xss, null, `${name}: no injected script ran`);
  assert.deepEqual(problems, [], `${name}: no console error`);
}

const labelsOf = async (chart: Locator, axis: "x" | "y"): Promise<string[]> =>
  JSON.parse((await chart.getAttribute(`data-${axis}-labels`)) ?? "[]") as string[];

/** 2 to 16 tick labels, all different and all shaped like `shape`. */
function assertTicks(labels: string[], shape: RegExp, what: string): void {
  assert.ok(labels.length >= 2 && labels.length <= 16, `${what}: a sensible number of ticks ${JSON.stringify(labels)}`);
  assert.equal(new Set(labels).size, labels.length, `${what}: distinct tick labels ${JSON.stringify(labels)}`);
  for (const label of labels) assert.match(label, shape, `${what}: ${label}`);
}

/** Minutes since local midnight in ZONE of "HH:mm[:ss]", and of now. */
const minutesOf = (label: string) => Number(label.slice(0, 2)) * 60 + Number(label.slice(3, 5));
function zoneNowMinutes(): number {
  const hm = new Intl.DateTimeFormat("en-GB", {
    timeZone: ZONE,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(new Date());
  return minutesOf(hm);
}
/** Within `minutes` of now in ZONE (modulo midnight): UTC would be 7-8 h away. */
function assertLocal(label: string, minutes: number): void {
  const off = Math.abs(minutesOf(label) - zoneNowMinutes());
  assert.ok(Math.min(off, 1440 - off) <= minutes, `${label} is local time in ${ZONE}`);
}

/** An uPlot chart's two axes, its axis titles and the legend naming `series`. */
async function assertUplot(chart: Locator, series: string[], what: string): Promise<void> {
  assert.equal(await chart.locator(".u-axis").count(), 2, `${what}: an x and a y axis`);
  const legend = await chart.locator(".u-legend .u-series .u-label").allInnerTexts();
  for (const name of series)
    assert.ok(legend.includes(name), `${what}: the legend names ${name}: ${legend.join(", ")}`);
}

/** Sidekiq 8 metrics keys as a worker's flushes write them, minute by minute over the last `minutes`. */
async function seedMetrics(minutes: number): Promise<void> {
  const now = Date.now();
  for (let i = minutes; i >= 1; i--) {
    const tracker = new ExecutionTracker();
    for (let k = 0; k < 10; k++) tracker.succeeded("EmailJob", 0.4); // ms: 4 ms per minute
    if (i % 3 === 0) for (let k = 0; k < 1000; k++) tracker.succeeded("FastJob", 0.012); // 12 ms per 1000
    if (i % 5 === 0) {
      tracker.succeeded("SlowJob", 1200 + 60 * (i % 10));
      tracker.succeeded(HOSTILE[0]!, 30);
    }
    if (i % 7 === 0) tracker.failed("EmailJob");
    await tracker.flush(redis.redis, "sidekiq8", new Date(now - i * MINUTE_MS));
  }
  const deployedAt = new Date(now - 20 * MINUTE_MS);
  await redis.redis.hset(deployMarksKey(deployedAt), deployedAt.toISOString(), HOSTILE[1]!);
}

test(
  "every chart reads: local time ticks, a value axis with units, a legend, an empty state; a job page shows its outcome and progress",
  { skip, timeout: 120_000 },
  async (t) => {
    const now = new Date();
    for (const [days, processed, failed] of [
      [0, 40, 3],
      [1, 75, 0],
      [2, 12, 1],
      [4, 90, 9],
    ] as const) {
      const day = new Date(now.getTime() - days * DAY_MS);
      await redis.redis.set(dailyStatKey(STAT_PROCESSED, day), String(processed));
      await redis.redis.set(dailyStatKey(STAT_FAILED, day), String(failed));
    }
    await seedMetrics(60);
    web = await startWeb({ redis: redis.redis });
    const base = web.url;
    const problems: string[] = [];
    const page = await newPage(problems);

    // At load: the Live chart says it has no numbers yet (a count per interval needs two polls). At 20 s
    // a poll, the second one is far enough away that a slow machine still reads the first state.
    await page.goto(`${base}/?days=7&interval=20`);
    await eventually(
      async () => (await page.locator("#live-status").textContent())?.startsWith("live"),
      20_000,
      "the first poll",
      100,
    );
    const live = page.locator("#live-chart");
    const waiting = (await live.locator(".chart-note").textContent()) ?? "";
    assert.match(waiting, /No numbers yet: processed and failed jobs per 20 s/, "the Live chart's empty state");
    assert.equal(await live.locator("canvas").count(), 0, "no chart of nothing at load");
    const history = page.locator("#history-chart");
    await history.locator("canvas").waitFor();
    await assertUplot(history, ["processed", "failed"], "history");
    assertTicks(await labelsOf(history, "x"), /^[A-Z][a-z]{2} \d{1,2}$/, "history days");
    assertTicks(await labelsOf(history, "y"), /^[\d,]+$/, "history counts");
    await assertClean(page, problems, "dashboard at load");
    await shoot(t, page, "live-at-load");

    // Some seconds of a real worker's traffic, polled every 2 s: the slider starts a new chart.
    await page.locator("#interval").fill("2");
    await page.locator("#interval").dispatchEvent("change");
    worker = new Worker({
      redis: redis.url,
      jobs: [ReportJob, ImportJob, FlakyJob, TickJob],
      queues: ["default"],
      concurrency: 3,
      logger: pino({ level: "silent" }),
    });
    await worker.start();
    client = new Client({ redis: redis.url });
    const pusher = setInterval(() => void client?.push({ class: TickJob, args: [] }).catch(() => {}), 100);
    try {
      await eventually(
        async () =>
          Number(await live.getAttribute("data-points")) >= 4 &&
          Number(await live.getAttribute("data-last-processed")) > 0,
        30_000,
        "four points of traffic on the Live chart",
        250,
      );
    } finally {
      clearInterval(pusher);
    }
    await assertUplot(live, ["processed", "failed"], "live");
    assert.equal(await live.locator(".chart-note").count(), 0, "the empty state is gone");
    assert.equal(await live.getAttribute("data-y-title"), "jobs per 2 s", "the value axis says its unit");
    const times = await labelsOf(live, "x");
    assertTicks(times, /^\d{2}:\d{2}:\d{2}$/, "live times");
    for (const label of times) assertLocal(label, 3);
    assertTicks(await labelsOf(live, "y"), /^[\d,]+$/, "live counts");
    await assertClean(page, problems, "dashboard with traffic");
    await shoot(t, page, "live-with-traffic");

    // Metrics: local time ticks, a value axis in a unit, a legend of the classes, averages with units.
    await page.goto(`${base}/metrics`);
    const metricsChart = page.locator("#metrics-chart");
    await metricsChart.locator("canvas").waitFor();
    await assertUplot(metricsChart, ["EmailJob", "FastJob", "SlowJob", HOSTILE[0]!], "metrics");
    const clock = await labelsOf(metricsChart, "x");
    assertTicks(clock, /^\d{2}:\d{2}$/, "metrics times");
    for (const label of clock) assertLocal(label, 75);
    const yTitle = (await metricsChart.getAttribute("data-y-title")) ?? "";
    const unit = /run time per minute \((µs|ms|s|min)\)$/.exec(yTitle)?.[1];
    assert.ok(unit, `the value axis names its unit: ${yTitle}`);
    assertTicks(await labelsOf(metricsChart, "y"), new RegExp(`^(0|[\\d.,]+ ${unit})$`), "metrics values");
    assert.equal(
      await metricsChart.locator(".mark").getAttribute("title"),
      `deploy: ${HOSTILE[1]}`,
      "the deploy mark, its label as text",
    );
    const average = async (name: string) =>
      (await page.locator("#metrics-table tr", { hasText: name }).locator("td").nth(4).innerText()).trim();
    assert.equal(await average("EmailJob"), "0.4 ms");
    assert.equal(await average("FastJob"), "12 µs");
    assert.match(await average("SlowJob"), /^1\.\d+ s$/);
    await assertClean(page, problems, "metrics");
    await shoot(t, page, "metrics");
    await page.goto(`${base}/metrics?substr=NoSuchClass`);
    assert.equal(await page.locator("#metrics-empty").innerText(), "No job ran in this period.");

    // A class: its average in a unit, a histogram and a per-minute chart with titled axes and legends.
    await page.goto(`${base}/metrics/EmailJob`);
    assert.equal(
      await page.locator("#class-totals tr", { hasText: "Average execution time" }).locator("td").innerText(),
      "0.4 ms",
    );
    for (const [id, legend, xTitle, yTitle, xShape] of [
      ["#histogram-chart", "successful runs", /execution time/, "runs", /^< [\d.]+m?s$/],
      ["#bubble-chart", "runs in a minute", /local time/, "execution time", /^\d{2}:\d{2}$/],
    ] as const) {
      const chart = page.locator(id);
      assert.ok(((await chart.locator(".legend text").textContent()) ?? "").startsWith(legend), `${id}: legend`);
      const titles = await chart.locator("text.axis-title").allTextContents();
      assert.ok(
        titles.some((title) => xTitle.test(title)) && titles.includes(yTitle),
        `${id}: axis titles ${titles.join(", ")}`,
      );
      const xs = await chart.locator(".x-axis text").allTextContents();
      assertTicks(xs, xShape, `${id} x`);
      assertTicks(await chart.locator(".y-axis text").allTextContents(), /\S/, `${id} y`);
      if (id === "#bubble-chart") for (const label of xs) assertLocal(label, 75);
    }
    await assertClean(page, problems, "class metrics");
    await shoot(t, page, "metrics-class");

    // A job's page: the stored result, as text; a running job's progress.
    const done = await client.push({ class: ReportJob, args: [] });
    const running = await client.push({ class: ImportJob, args: [] });
    await eventually(async () => (await redis.redis.exists(`tsq:result:${done}`)) === 1, 20_000, "the stored result");
    await page.goto(`${base}/jobs/${done}`);
    const result = await page.locator("#job-outcome pre.result").innerText();
    assert.deepEqual(JSON.parse(result), { note: HOSTILE[0], rows: 412 }, "the result, as text");
    assert.equal(await page.locator("#job-outcome .badge").innerText(), "done");
    await assertClean(page, problems, "job outcome");
    await shoot(t, page, "job-outcome");
    await eventually(
      async () => {
        await page.goto(`${base}/jobs/${running}`);
        return (await page.locator("#job-progress").count()) === 1;
      },
      20_000,
      "the running job's progress",
      250,
    );
    assert.equal(await page.locator("#job-progress .progress-n").innerText(), "40");
    assert.ok(
      (await page.locator("#job-progress").innerText()).includes(JSON.stringify(HOSTILE[1])),
      "progress data, as text",
    );
    await assertClean(page, problems, "job progress");
    await shoot(t, page, "job-progress");
    await page.goto(`${base}/busy`);
    assert.equal(await page.locator(`a[href="/jobs/${running}"]`).count(), 1, "Busy links the running jid");
    const unknown = await fetch(`${base}/jobs/0123456789abcdef01234567`);
    assert.match(await unknown.text(), /id="job-unknown"/, "a jid with nothing known says so");
    assert.equal((await fetch(`${base}/jobs/${encodeURIComponent("<b>")}`)).status, 400, "a jid that is not one");
    ImportJob.release();

    // A retry's page: the stored error of its last attempt, as text.
    const flaky = (await client.push({ class: FlakyJob, args: [] })) ?? "refused";
    const score = await eventually(
      async () =>
        (await redis.redis.zrange(RETRY, 0, -1, "WITHSCORES")).find((v, i, all) => all[i - 1]?.includes(flaky)),
      20_000,
      "the failed job in the retry set",
    );
    await eventually(async () => (await redis.redis.exists(`tsq:result:${flaky}`)) === 1, 20_000, "its stored error");
    await page.goto(`${base}/retries/${Number(score)}-${flaky}`);
    assert.equal(await page.locator("#job-outcome .badge").innerText(), "failed");
    assert.equal(await page.locator("#job-outcome pre.error-text").innerText(), `TypeError: no row ${HOSTILE[0]}`);
    await assertClean(page, problems, "retry outcome");
    await page.context().close();
  },
);
