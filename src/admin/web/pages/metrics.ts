/**
 * Metrics, at Sidekiq Web's URLs and from Sidekiq 7's and 8's keys (tsq and Ruby jobs alike):
 *
 *   /metrics?period=1h..72h&substr=   the top classes by total run time, with their total seconds over
 *                                     the period drawn for the top 5
 *   /metrics/:Class?period=1h..8h     one class: runs, failures, times, and its run-time histogram
 *                                     (bucket totals, and per minute)
 *
 * As Sidekiq, a 1-hour page asks the browser to reload it every 60 s (`refresh: 60`).
 */
import {
  BUCKET_LABELS,
  ExecutionMetrics,
  METRICS_PERIODS,
  averageSeconds,
  isMetricsPeriod,
  type ClassMetrics,
  type MetricsPeriod,
  type MetricsResult,
} from "../../api/index.js";
import { page, type RequestContext, type RouteResult } from "../context.js";
import { html, url, type Html } from "../html.js";
import { duration } from "../units.js";

/** Rows in the table and lines in the chart (Sidekiq's `table_limit`, `chart_limit`). */
const TABLE_LIMIT = 20;
const CHART_LIMIT = 5;
/** Periods read from the 1-minute keys (up to 8 h): the only ones with histograms, so a class page's. */
const CLASS_PERIODS = (Object.keys(METRICS_PERIODS) as MetricsPeriod[]).filter((p) => parseInt(p, 10) <= 8);

function periodOf(ctx: RequestContext, allowed: readonly MetricsPeriod[]): MetricsPeriod {
  const text = ctx.query.get("period") ?? "1h";
  if (!isMetricsPeriod(text)) return "1h";
  // Sidekiq clamps a class page's period to 8 h: histograms exist per minute only.
  return allowed.includes(text) ? text : allowed.at(-1)!;
}

function periodLinks(
  ctx: RequestContext,
  path: string,
  current: MetricsPeriod,
  allowed: readonly MetricsPeriod[],
): Html {
  return html`<div class="days">
    ${allowed.map((p) => {
      const q = new URLSearchParams(ctx.query);
      q.set("period", p);
      return html`<a class="${p === current ? "btn active" : "btn"}" href="${path}?${q.toString()}">${p}</a>`;
    })}
  </div>`;
}

/** A class's average successful run, with its unit ("0.4 ms", "12 µs"): never a bare "0" for a fast job. */
const avg = (c: ClassMetrics): string =>
  // Counters are whole milliseconds (Sidekiq's, and tsq's per flush): runs all under one read as 0 ms.
  c.ms === 0 && c.p > c.f ? "< 1 ms" : duration(averageSeconds(c) * 1000);
const count = (n: number): string => n.toLocaleString("en-US");

function span(result: MetricsResult): Html {
  return html`<p class="muted small">
    ${result.startsAt.toISOString().slice(0, 16).replace("T", " ")} to
    ${result.endsAt.toISOString().slice(0, 16).replace("T", " ")} UTC, ${result.buckets.length}
    ${result.granularity === "minutely" ? "1-minute" : "10-minute"}
    buckets${
      result.marks.length
        ? html`; deploys: ${result.marks.map((m) => `${m.time.slice(11, 16)} ${m.label}`).join(", ")}`
        : ""
    }
  </p>`;
}

export async function metrics(ctx: RequestContext): Promise<RouteResult> {
  const period = periodOf(ctx, Object.keys(METRICS_PERIODS) as MetricsPeriod[]);
  const substr = (ctx.query.get("substr") ?? "").slice(0, 200);
  const result = await new ExecutionMetrics(ctx.redis).top(period, substr);
  const ranked = [...result.classes].sort((a, b) => b[1].ms - a[1].ms).slice(0, TABLE_LIMIT);
  if (period === "1h") ctx.res.setHeader("refresh", "60");
  // Numbers and ISO times only: the browser draws them in its local time (assets/charts.js).
  const chart = {
    buckets: result.buckets,
    bucketSeconds: result.granularity === "minutely" ? 60 : 600,
    series: ranked.slice(0, CHART_LIMIT).map(([name, c]) => ({ name, values: c.series.ms })),
    marks: result.marks.map((m) => ({ at: Date.parse(m.time) / 1000, label: m.label })),
  };
  const path = `${ctx.base}/metrics`;
  const body = html`${periodLinks(ctx, path, period, Object.keys(METRICS_PERIODS) as MetricsPeriod[])}
    <form method="get" action="${path}" class="filter">
      <input type="hidden" name="period" value="${period}" />
      <input name="substr" value="${substr}" placeholder="class name contains…" />
      <button class="btn" type="submit">Filter</button>
    </form>
    <section class="panel">
      <h2>Total execution time <small>per bucket, top ${Math.min(CHART_LIMIT, ranked.length)}</small></h2>
      ${
        ranked.length
          ? html`<div id="metrics-chart" class="chart" data-series="${JSON.stringify(chart)}"></div>`
          : html`<p class="chart-note muted" id="metrics-empty">No job ran in this period.</p>`
      }
    </section>
    <table class="list" id="metrics-table">
      <thead>
        <tr>
          <th>Class</th>
          <th>Success</th>
          <th>Failure</th>
          <th>Total</th>
          <th>Average</th>
        </tr>
      </thead>
      <tbody>
        ${
          ranked.length
            ? ranked.map(
                ([name, c], i) =>
                  html`<tr>
                    <td>
                      <span class="${i < CHART_LIMIT ? `swatch s${i}` : "swatch"}"></span
                      ><a href="${url(path, name)}?period=${period}"><code>${name}</code></a>
                    </td>
                    <td>${count(c.p - c.f)}</td>
                    <td>${count(c.f)}</td>
                    <td>${duration(c.ms)}</td>
                    <td>${avg(c)}</td>
                  </tr>`,
              )
            : html`<tr>
                <td colspan="5" class="muted">No job metrics in this period.</td>
              </tr>`
        }
      </tbody>
    </table>
    ${span(result)}`;
  return page("Metrics", body);
}

export async function classMetrics(ctx: RequestContext): Promise<RouteResult> {
  const name = ctx.params[0] ?? "";
  const period = periodOf(ctx, CLASS_PERIODS);
  const result = await new ExecutionMetrics(ctx.redis).forClass(name, period);
  if (period === "1h") ctx.res.setHeader("refresh", "60");
  const c = result.classes.get(name);
  const path = url(`${ctx.base}/metrics`, name);
  const header = html`<p><a href="${ctx.base}/metrics?period=${period}">« all classes</a></p>
    ${periodLinks(ctx, path, period, CLASS_PERIODS)}`;
  if (!c || c.p === 0)
    return page(
      `Metrics: ${name}`,
      html`${header}
        <p class="muted">No metrics for this class in this period.</p>`,
    );
  const hists = c.histograms ?? [];
  const totals = BUCKET_LABELS.map((_, i) => hists.reduce((sum, h) => sum + (h[i] ?? 0), 0));
  const bubbles = {
    // ISO times: the browser labels them in its local time.
    times: result.buckets,
    buckets: BUCKET_LABELS,
    points: hists.flatMap((h, x) => h.flatMap((n, y) => (n > 0 ? [[x, y, n]] : []))),
  };
  const body = html`${header}
    <table class="kv" id="class-totals">
      <tr>
        <th>Success</th>
        <td>${count(c.p - c.f)}</td>
      </tr>
      <tr>
        <th>Failure</th>
        <td>${count(c.f)}</td>
      </tr>
      <tr>
        <th>Total execution time</th>
        <td>${duration(c.ms)}</td>
      </tr>
      <tr>
        <th>Average execution time</th>
        <td>${avg(c)}</td>
      </tr>
    </table>
    <section class="panel">
      <h2>Execution time <small>successful runs per bucket (shorter than its label), ${period}</small></h2>
      <div
        id="histogram-chart"
        class="chart"
        data-series="${JSON.stringify({ labels: BUCKET_LABELS, values: totals })}"
      ></div>
      <table class="list small" id="histogram-table">
        <tr>
          ${BUCKET_LABELS.map((label, i) => (totals[i] ? html`<th>${label}</th>` : ""))}
        </tr>
        <tr>
          ${totals.map((n) => (n ? html`<td>${count(n)}</td>` : ""))}
        </tr>
      </table>
    </section>
    <section class="panel">
      <h2>Per minute <small>runs by execution time</small></h2>
      <div id="bubble-chart" class="chart" data-series="${JSON.stringify(bubbles)}"></div>
    </section>
    ${span(result)}`;
  return page(`Metrics: ${name}`, body);
}
