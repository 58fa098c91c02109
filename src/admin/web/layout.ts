/**
 * The page shell shared by every page: navigation at Sidekiq's URLs, the summary cards, flash-free
 * forms with the CSRF token, and the pager. Scripts and styles come from the package and from uPlot's
 * (`/assets/...`, see assets.ts) and carry the response's nonce; there are no inline handlers. Deferred
 * scripts run in document order, so uPlot's global exists before charts.js draws with it.
 */
import type { StatsSnapshot } from "../api/index.js";
import type { RequestContext } from "./context.js";
import { html, type Html, type Interpolated } from "./html.js";
import { CSRF_FIELD } from "./security.js";
import { toEpochSeconds } from "../../wire/timestamps.js";

const TABS: [string, string][] = [
  ["Dashboard", "/"],
  ["Busy", "/busy"],
  ["Queues", "/queues"],
  ["Retries", "/retries"],
  ["Scheduled", "/scheduled"],
  // Durable jobs parked in `schedule` (sleeping or waiting on an event): a view of part of Scheduled.
  ["Waiting", "/waiting"],
  ["Dead", "/morgue"],
  ["Metrics", "/metrics"],
  ["Cron", "/cron"],
  ["Failures", "/failures"],
  ["Search", "/search"],
];

export function layout(ctx: RequestContext, title: string, body: Html, stats: StatsSnapshot | null): Html {
  const path = new URL(ctx.req.url ?? "/", "http://x").pathname.slice(ctx.base.length) || "/";
  const tabs = TABS.map(([label, href]) => {
    const active = href === "/" ? path === "/" : path.startsWith(href);
    return html`<a class="${active ? "tab active" : "tab"}" href="${ctx.base}${href}">${label}</a>`;
  });
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}${ctx.shards.length ? ` · ${ctx.shard}` : ""} · tsq</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${ctx.base}/assets/uplot.min.css" nonce="${ctx.nonce}" />
        <link rel="stylesheet" href="${ctx.base}/assets/web.css" nonce="${ctx.nonce}" />
        <script src="${ctx.base}/assets/uplot.min.js" nonce="${ctx.nonce}" defer></script>
        <script src="${ctx.base}/assets/charts.js" nonce="${ctx.nonce}" defer></script>
        <script src="${ctx.base}/assets/web.js" nonce="${ctx.nonce}" defer></script>
      </head>
      <body data-base="${ctx.base}">
        <nav>
          <span class="brand">tsq</span>${tabs}${ctx.readOnly ? html`<span class="badge">read-only</span>` : ""}
          ${shardSwitcher(ctx)}
        </nav>
        ${stats ? summary(ctx, stats) : ""}
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
        <footer>tsq · ${new Date().toISOString().slice(11, 19)} UTC</footer>
      </body>
    </html>`;
}

/** A link per shard, the one shown marked (a sharded Redis only; each shard is its own Sidekiq layout). */
function shardSwitcher(ctx: RequestContext): Html | "" {
  if (ctx.shards.length === 0) return "";
  return html`<span class="shards" id="shards"
    >shard:
    ${ctx.shards.map((name, i) => {
      const href = i === 0 ? `${ctx.rootBase}/` : `${ctx.rootBase}/shards/${encodeURIComponent(name)}/`;
      return html`<a class="${name === ctx.shard ? "tab active" : "tab"}" href="${href}">${name}</a>`;
    })}</span
  >`;
}

function summary(ctx: RequestContext, s: StatsSnapshot): Html {
  const cards: [string, number, string][] = [
    ["Processed", s.processed, "/"],
    ["Failed", s.failed, "/"],
    ["Busy", s.workersSize, "/busy"],
    ["Enqueued", s.enqueued, "/queues"],
    ["Retries", s.retrySize, "/retries"],
    ["Scheduled", s.scheduledSize, "/scheduled"],
    ["Dead", s.deadSize, "/morgue"],
  ];
  return html`<section class="summary">
    ${cards.map(
      ([label, value, href]) =>
        html`<a class="card" href="${ctx.base}${href}"
          ><span class="value" data-stat="${label.toLowerCase()}">${value.toLocaleString("en-US")}</span
          ><span class="label">${label}</span></a
        >`,
    )}
  </section>`;
}

/** A POST form with the CSRF token; nothing (not even the button) in read-only mode. */
export function form(
  ctx: RequestContext,
  action: string,
  content: Interpolated,
  options: { confirm?: string; id?: string; cls?: string } = {},
): Html {
  if (ctx.readOnly) return html``;
  return html`<form
    method="post"
    action="${action}"
    class="${options.cls ?? "inline"}"
    ${options.id ? html` id="${options.id}"` : ""}${options.confirm ? html` data-confirm="${options.confirm}"` : ""}
  >
    <input type="hidden" name="${CSRF_FIELD}" value="${ctx.csrfToken}" />${content}
  </form>`;
}

/** A submit button named `name` (the action the server reads). */
export function button(name: string, label: string, cls = "btn"): Html {
  return html`<button type="submit" name="${name}" value="1" class="${cls}">${label}</button>`;
}

/** Previous/next links for a list of `total` items shown `count` per page (pages start at 1). */
export function pager(ctx: RequestContext, path: string, pageNo: number, count: number, total: number): Html {
  const last = Math.max(1, Math.ceil(total / count));
  const link = (p: number, label: string) => {
    const q = new URLSearchParams(ctx.query);
    q.set("page", String(p));
    return html`<a class="btn" href="${ctx.base}${path}?${q.toString()}">${label}</a>`;
  };
  return html`<div class="pager">
    ${pageNo > 1 ? link(1, "« First") : ""}${pageNo > 1 ? link(pageNo - 1, "‹ Prev") : ""}<span
      >Page ${pageNo} of ${last.toLocaleString("en-US")} (${total.toLocaleString("en-US")} total)</span
    >${pageNo < last ? link(pageNo + 1, "Next ›") : ""}${pageNo < last ? link(last, "Last »") : ""}
  </div>`;
}

/** Epoch seconds as an ISO time plus "N ago"/"in N" (text only: times come from Redis). */
export function when(seconds: number | undefined, now = Date.now() / 1000): Html {
  if (seconds === undefined || !Number.isFinite(seconds)) return html`<span class="muted">–</span>`;
  const iso = new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
  return html`<time title="${iso} UTC">${relative(seconds - now)}</time>`;
}

/** Epoch seconds a stored time may hold (2001 to 2286): a number outside them is shown as it is. */
const TIME_RANGE = { min: 1e9, max: 1e10 } as const;

/** True for a job field that holds a time: `at` and every `*_at` (`created_at`, `failed_at`, ...). */
export function isTimeField(name: string): boolean {
  return name === "at" || name.endsWith("_at");
}

/**
 * A stored time (float seconds, Sidekiq 8's integer milliseconds, or either as a string) as
 * "2026-11-21 12:38:27 UTC (10 d ago)", with the stored value in the title and the exact instant in
 * `datetime`; null when the value is not a time, so the caller shows it as it is.
 */
export function stamp(raw: unknown, now = Date.now() / 1000): Html | null {
  if (typeof raw !== "number" && typeof raw !== "string") return null;
  const seconds = toEpochSeconds(raw);
  if (seconds === undefined || seconds < TIME_RANGE.min || seconds > TIME_RANGE.max) return null;
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}" title="${String(raw)}">${iso.slice(0, 19).replace("T", " ")} UTC</time>
    <span class="muted">(${relative(seconds - now)})</span>`;
}

export function relative(delta: number): string {
  const abs = Math.abs(delta);
  const text =
    abs < 60
      ? `${Math.round(abs)} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86400
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86400)} d`;
  return delta < 0 ? `${text} ago` : `in ${text}`;
}
