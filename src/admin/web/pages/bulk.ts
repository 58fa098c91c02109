/**
 * Paced retries (`POST /retries/all/retry` or `/morgue/all/retry`, or a failure group's retry, with `pace`,
 * jobs a second): they run in the background of this web process (PacedRetries), and `/bulk` shows each
 * one's progress with a Cancel button (`POST /bulk/:id/cancel`). Without `pace` they run at once.
 */
import type { JobSet } from "../../api/index.js";
import { HttpError, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html, url, type Html } from "../html.js";
import { button, form, relative } from "../layout.js";
import type { PacedRetry, PacedWork } from "../PacedRetries.js";

/** Jobs a second a pace may ask for (above it, pacing is moot: an unpaced retry does ~25,000/s). */
const MAX_PACE = 100_000;
/** Seconds between reloads of `/bulk` while a retry runs. */
const REFRESH = 2;

/** The pace field of a "retry all" form. */
export function paceInput(): Html {
  return html`<input
    type="number"
    name="pace"
    min="1"
    max="${MAX_PACE}"
    class="pace"
    placeholder="jobs/s (blank: at once)"
    title="retry at most this many jobs a second, in the background"
  />`;
}

/** The pace a form asks for: undefined when blank, else a whole number from 1 to MAX_PACE. */
export function paceOf(ctx: RequestContext): number | undefined {
  const text = (ctx.form.get("pace") ?? "").trim();
  if (text === "") return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_PACE)
    throw new HttpError(400, `pace must be a whole number of jobs a second from 1 to ${MAX_PACE}`);
  return Number(text);
}

export async function startPacedRetry(
  ctx: RequestContext,
  set: JobSet,
  path: string,
  title: string,
  perSecond: number,
): Promise<RouteResult> {
  const total = await set.size();
  return startPaced(ctx, { path, title, total, perSecond, run: (pace) => set.retryAll(pace) });
}

/** Starts a paced retry in the background and shows `/bulk`; 409 while one runs on the same set. */
export function startPaced(
  ctx: RequestContext,
  work: Pick<PacedWork, "path" | "title" | "total" | "perSecond" | "run">,
): RouteResult {
  try {
    ctx.paced.start({ ...work, user: ctx.user, audit: (a, t, n) => ctx.audit(a, t, n) });
  } catch (error) {
    throw new HttpError(409, error instanceof Error ? error.message : String(error));
  }
  return redirect(`${ctx.base}/bulk`);
}

/** A line on a set's page while a paced retry of it runs. */
export function pacedNotice(ctx: RequestContext, path: string): Html {
  const running = ctx.paced.list().find((r) => r.path === path && r.state === "running");
  if (!running) return html``;
  return html`<p class="warn">
    Retrying at ${running.perSecond.toLocaleString("en-US")}/s: ${running.done.toLocaleString("en-US")} of
    ${running.total.toLocaleString("en-US")} done. <a href="${ctx.base}/bulk">Progress</a>
  </p>`;
}

function row(ctx: RequestContext, r: PacedRetry, now: number): Html {
  const left = Math.max(0, r.total - r.done);
  const eta = r.state === "running" ? `about ${relative(left / r.perSecond).replace("in ", "")} left` : "";
  return html`<tr data-id="${r.id}">
    <td><a href="${ctx.base}/${r.path}">${r.title}</a></td>
    <td>${r.perSecond.toLocaleString("en-US")}/s</td>
    <td>
      <progress max="${Math.max(1, r.total)}" value="${Math.min(r.done, Math.max(1, r.total))}"></progress>
      <span class="done">${r.done.toLocaleString("en-US")}</span> of ${r.total.toLocaleString("en-US")}
      <div class="muted small">${eta}</div>
    </td>
    <td>
      <span class="${r.state === "failed" ? "badge warn" : "badge"}">${r.state}</span>${
        r.error ? html`<div class="error">${r.error}</div>` : ""
      }
    </td>
    <td>${r.user}</td>
    <td>${relative((r.startedAt - now) / 1000)}</td>
    <td>
      ${
        r.state === "running"
          ? form(ctx, url(`${ctx.base}/bulk`, r.id, "cancel"), button("cancel", "Cancel", "btn danger"))
          : ""
      }
    </td>
  </tr>`;
}

export async function bulkPage(ctx: RequestContext): Promise<RouteResult> {
  const retries = ctx.paced.list();
  const now = Date.now();
  if (retries.some((r) => r.state === "running")) ctx.res.setHeader("refresh", String(REFRESH));
  const body = retries.length
    ? html`<table class="list" id="bulk-table">
        <thead>
          <tr>
            <th>Set</th>
            <th>Pace</th>
            <th>Progress</th>
            <th>State</th>
            <th>By</th>
            <th>Started</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${retries.map((r) => row(ctx, r, now))}
        </tbody>
      </table>`
    : html`<p class="muted">
        No paced retries since this dashboard started. Give a pace (jobs a second) to "Retry now (all)" on Retries or
        Dead.
      </p>`;
  return page("Paced retries", body);
}

/** `POST /bulk/:id/cancel`. */
export async function bulkCancel(ctx: RequestContext): Promise<RouteResult> {
  const id = ctx.params[0] ?? "";
  const retry = ctx.paced.list().find((r) => r.id === id);
  if (!retry || !ctx.paced.cancel(id)) throw new HttpError(404, "no paced retry running with that id");
  ctx.audit("cancel paced retry", retry.title, retry.done);
  return redirect(`${ctx.base}/bulk`);
}
