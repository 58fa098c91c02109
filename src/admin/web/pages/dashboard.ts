/**
 * The Dashboard (`/`), `/stats` and `/stats/queues` in Sidekiq Web's JSON shape, and `/stream`: the
 * same numbers pushed as server-sent events every 2–20 s for the live graph (the page closes the
 * stream while its tab is hidden, so a forgotten tab costs Redis nothing). Both charts are drawn by
 * assets/charts.js from numbers only: the history as JSON in a data attribute, the live one from the
 * stream's events.
 */
import { Stats } from "../../api/index.js";
import { HttpError, intParam, json, page, type RequestContext, type RouteResult } from "../context.js";
import { html } from "../html.js";

/** The INFO fields Sidekiq's `/stats` and Dashboard show (`REDIS_KEYS` in Sidekiq's web application). */
const REDIS_KEYS = [
  "redis_version",
  "uptime_in_days",
  "connected_clients",
  "used_memory_human",
  "used_memory_peak_human",
];

/** Seconds between pushes: Sidekiq's slider bounds and default. */
const MIN_INTERVAL = 2;
const MAX_INTERVAL = 20;
const DEFAULT_INTERVAL = 5;

/** `/stats`, field for field as Sidekiq Web's: `{sidekiq: {...}, redis: {...}, server_utc_time}`. */
export async function statsJson(ctx: RequestContext): Promise<Record<string, unknown>> {
  const stats = new Stats(ctx.redis);
  const [s, info] = await Promise.all([stats.fetch(), stats.redisInfo()]);
  const redis: Record<string, string> = {};
  for (const key of REDIS_KEYS) if (info[key] !== undefined) redis[key] = info[key];
  return {
    sidekiq: {
      processed: s.processed,
      failed: s.failed,
      busy: s.workersSize,
      processes: s.processesSize,
      enqueued: s.enqueued,
      scheduled: s.scheduledSize,
      retries: s.retrySize,
      dead: s.deadSize,
      default_latency: s.defaultQueueLatency,
    },
    redis,
    server_utc_time: `${new Date().toISOString().slice(11, 19)} UTC`,
  };
}

export async function stats(ctx: RequestContext): Promise<RouteResult> {
  return json(await statsJson(ctx));
}

export async function statsQueues(ctx: RequestContext): Promise<RouteResult> {
  return json(Object.fromEntries(await new Stats(ctx.redis).queues()));
}

export async function dashboard(ctx: RequestContext): Promise<RouteResult> {
  const daysText = ctx.query.get("days");
  if (daysText !== null && !/^\d+$/.test(daysText))
    throw new HttpError(400, "days must be a whole number from 1 to 180");
  const days = daysText === null ? 30 : Number(daysText);
  if (days < 1 || days > 180) throw new HttpError(400, "days must be a whole number from 1 to 180");
  const stats = new Stats(ctx.redis);
  const [history, info] = await Promise.all([stats.history(days), stats.redisInfo()]);
  const dates = Object.keys(history.processed).reverse();
  const series = {
    dates,
    processed: dates.map((d) => history.processed[d] ?? 0),
    failed: dates.map((d) => history.failed[d] ?? 0),
  };
  const interval = intParam(ctx.query, "interval", DEFAULT_INTERVAL, MIN_INTERVAL, MAX_INTERVAL);
  const body = html` <section class="panel">
      <h2>Live <small>processed and failed per interval</small></h2>
      <label
        >Interval <input id="interval" type="range" min="${MIN_INTERVAL}" max="${MAX_INTERVAL}" value="${interval}" />
        <output id="interval-value">${interval} s</output></label
      >
      <span id="live-status" class="muted">connecting…</span>
      <div id="live-chart" class="chart" data-stream="${ctx.base}/stream"></div>
    </section>
    <section class="panel">
      <h2>History <small>${days} days</small></h2>
      <div class="days">
        ${[7, 30, 90, 180].map((d) => html`<a class="${d === days ? "btn active" : "btn"}" href="${ctx.base}/?days=${d}">${d} d</a>`)}
      </div>
      ${
        series.processed.some((n) => n > 0) || series.failed.some((n) => n > 0)
          ? html`<div id="history-chart" class="chart" data-series="${JSON.stringify(series)}"></div>`
          : html`<p class="chart-note muted">No job was processed or failed in these ${days} days.</p>`
      }
    </section>
    <section class="panel">
      <h2>Redis</h2>
      <table class="kv">
        ${REDIS_KEYS.map(
          (key) =>
            html`<tr>
              <th>${key}</th>
              <td>${info[key] ?? "–"}</td>
            </tr>`,
        )}
      </table>
    </section>`;
  return page("Dashboard", body);
}

/**
 * Server-sent events: one `stats` event (the `sidekiq` part of `/stats`) every `interval` seconds
 * until the browser disconnects.
 */
export async function stream(ctx: RequestContext): Promise<RouteResult> {
  const interval = intParam(ctx.query, "interval", DEFAULT_INTERVAL, MIN_INTERVAL, MAX_INTERVAL);
  const { res, req } = ctx;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const push = async () => {
    try {
      const value = await statsJson(ctx);
      if (!closed) res.write(`event: stats\ndata: ${JSON.stringify(value)}\n\n`);
    } catch {
      if (!closed) res.write(`event: failure\ndata: "Redis did not answer"\n\n`);
    }
    if (!closed) timer = setTimeout(() => void push(), interval * 1000);
  };
  req.on("close", () => {
    closed = true;
    clearTimeout(timer);
  });
  await push();
  return { kind: "done" };
}
