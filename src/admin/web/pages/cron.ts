/**
 * Cron (`/cron`): tsq's periodic schedules and sidekiq-cron's side by side, as `tsqctl cron list` shows
 * them, with "Enqueue now" and Disable/Enable (POST `/cron/:scheduler/:name/enqueue|enable|disable`,
 * as sidekiq-cron's tab offers). Every action goes through tsq/api's CronSchedules.
 */
import { CronSchedules, type CronJson, type Scheduler } from "../../api/index.js";
import { HttpError, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { ArgumentError } from "../../../wire/errors.js";
import { html, truncate, url, type Html } from "../html.js";
import { button, form, when } from "../layout.js";
import { ARGS_PREVIEW } from "./busy.js";

const SCHEDULERS: readonly Scheduler[] = ["tsq", "sidekiq-cron"];
const ACTIONS = ["enqueue", "enable", "disable"] as const;

function row(ctx: RequestContext, s: CronJson): Html {
  const action = url(`${ctx.base}/cron`, s.scheduler, s.name);
  return html`<tr>
    <td>${s.enabled ? html`<span class="badge">enabled</span>` : html`<span class="badge warn">disabled</span>`}</td>
    <td><code>${s.name}</code>${s.description ? html`<div class="muted small">${s.description}</div>` : ""}</td>
    <td><code>${s.cron}</code> <span class="muted small">${s.tz}</span></td>
    <td><code>${s.class}</code></td>
    <td>${s.queue}</td>
    <td><code>${truncate(JSON.stringify(s.args), ARGS_PREVIEW)}</code></td>
    <td>${when(s.last_run ?? undefined)}${s.last_jid ? html`<div class="muted small">${s.last_jid}</div>` : ""}</td>
    <td>${when(s.next_run ?? undefined)}</td>
    <td>
      <span class="badge">${s.scheduler}</span>
      <div class="muted small">${s.source}</div>
    </td>
    <td>
      ${form(ctx, `${action}/enqueue`, button("enqueue", "Enqueue now"), { confirm: `Push a ${s.class} job now?` })}
      ${
        s.enabled
          ? form(ctx, `${action}/disable`, button("disable", "Disable", "btn danger"))
          : form(ctx, `${action}/enable`, button("enable", "Enable"))
      }
    </td>
  </tr>`;
}

export async function cron(ctx: RequestContext): Promise<RouteResult> {
  const schedules = await new CronSchedules(ctx.redis).list();
  const body = schedules.length
    ? html`<table class="list" id="cron-table">
        <thead>
          <tr>
            <th>Status</th>
            <th>Name</th>
            <th>Cron</th>
            <th>Class</th>
            <th>Queue</th>
            <th>Arguments</th>
            <th>Last enqueued</th>
            <th>Next run</th>
            <th>Scheduler</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${schedules.map((s) => row(ctx, s))}
        </tbody>
      </table>`
    : html`<p class="muted">
        No periodic schedules: none declared (config <code>cron:</code> or a class's <code>static cron</code>), no
        leader has started yet, and no sidekiq-cron schedule is stored.
      </p>`;
  return page("Cron", body);
}

/** POST `/cron/:scheduler/:name/:action`. */
export async function cronAction(ctx: RequestContext): Promise<RouteResult> {
  const [scheduler = "", name = "", action = ""] = ctx.params;
  if (!SCHEDULERS.includes(scheduler as Scheduler)) throw new HttpError(404, "no such scheduler (tsq or sidekiq-cron)");
  if (!(ACTIONS as readonly string[]).includes(action)) throw new HttpError(404, "say enqueue, enable or disable");
  const schedules = new CronSchedules(ctx.redis);
  const target = `${scheduler}:${name}`;
  try {
    if (action === "enqueue") {
      const jid = await schedules.enqueue(name, scheduler as Scheduler);
      if (jid === null) throw new HttpError(409, "a client middleware stopped the push; nothing was enqueued");
    } else await schedules.setEnabled(name, action === "enable", scheduler as Scheduler);
  } catch (error) {
    if (error instanceof ArgumentError) throw new HttpError(404, error.message);
    throw error;
  }
  ctx.audit(`cron ${action}`, target, 1);
  return redirect(`${ctx.base}/cron`);
}
