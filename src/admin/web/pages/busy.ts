/**
 * Busy (`/busy`): live processes with their badges and the jobs running now; quiet or stop one
 * process, or every non-embedded one (Sidekiq's `POST /busy` with or without `identity`).
 */
import { ProcessSet, WorkSet, type ProcessRecord } from "../../api/index.js";
import type { WorkProgress } from "../../api/WorkSet.js";
import { HttpError, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html, truncate, url } from "../html.js";
import { button, form, when } from "../layout.js";
import { iterationProgress, type IterationProgress } from "../../../features/iterable/state.js";

/** Characters of a job's arguments shown in a list; the job page shows them whole. */
export const ARGS_PREVIEW = 100;

function processRow(ctx: RequestContext, p: ProcessRecord): ReturnType<typeof html> {
  const badges = [
    p.tag ? html`<span class="badge">${p.tag}</span>` : "",
    p.labels.map((l) => html`<span class="badge">${l}</span>`),
    p.embedded ? html`<span class="badge">embedded</span>` : "",
    p.quiet ? html`<span class="badge warn">quiet</span>` : "",
    p.leader ? html`<span class="badge">leader</span>` : "",
  ];
  const actions = p.embedded
    ? ""
    : form(
        ctx,
        `${ctx.base}/busy`,
        html`<input
            type="hidden"
            name="identity"
            value="${p.identity}"
          />${p.quiet ? "" : button("quiet", "Quiet")}${button("stop", "Stop", "btn danger")}`,
      );
  return html`<tr data-identity="${p.identity}">
    <td>
      <code>${p.hostname}:${p.pid}</code> ${badges}
      <div class="muted small">${p.identity}</div>
    </td>
    <td>${p.queues.join(", ")}</td>
    <td>${p.version ?? ""}</td>
    <td>${when(p.startedAt)}</td>
    <td>${Math.round(p.rssKb / 1024)} MB</td>
    <td>${p.concurrency}</td>
    <td>${p.busy}</td>
    <td>${when(p.beat)}</td>
    <td>${actions}</td>
  </tr>`;
}

export async function busy(ctx: RequestContext): Promise<RouteResult> {
  const [processes, work] = await Promise.all([new ProcessSet(ctx.redis).list(), new WorkSet(ctx.redis).list()]);
  const threads = processes.reduce((n, p) => n + p.concurrency, 0);
  const busyCount = processes.reduce((n, p) => n + p.busy, 0);
  const rss = processes.reduce((n, p) => n + p.rssKb, 0);
  const live = new Set(processes.map((p) => p.identity));
  const progress = await iterationProgress(
    ctx.redis,
    work.flatMap((w) => (w.job.jid ? [w.job.jid] : [])),
  );
  const body = html` <section class="summary small">
      <div class="card"><span class="value">${processes.length}</span><span class="label">Processes</span></div>
      <div class="card"><span class="value">${threads}</span><span class="label">Threads</span></div>
      <div class="card"><span class="value">${busyCount}</span><span class="label">Busy</span></div>
      <div class="card">
        <span class="value">${threads ? Math.round((busyCount / threads) * 100) : 0}%</span
        ><span class="label">Utilization</span>
      </div>
      <div class="card"><span class="value">${Math.round(rss / 1024)} MB</span><span class="label">RSS</span></div>
    </section>
    <h2>Processes</h2>
    ${form(ctx, `${ctx.base}/busy`, html`${button("quiet", "Quiet All")}${button("stop", "Stop All", "btn danger")}`, { confirm: "Signal every process?" })}
    <table class="list">
      <thead>
        <tr>
          <th>Name</th>
          <th>Queues</th>
          <th>Version</th>
          <th>Started</th>
          <th>RSS</th>
          <th>Threads</th>
          <th>Busy</th>
          <th>Beat</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${processes.map((p) => processRow(ctx, p))}
      </tbody>
    </table>
    <h2>Jobs</h2>
    <table class="list">
      <thead>
        <tr>
          <th>Process</th>
          <th>TID</th>
          <th>JID</th>
          <th>Queue</th>
          <th>Job</th>
          <th>Arguments</th>
          <th>Progress</th>
          <th>Started</th>
        </tr>
      </thead>
      <tbody>
        ${work.map(
          (w) =>
            html`<tr>
              <td>${w.process}${live.has(w.process) ? "" : html` <span class="badge warn">orphaned</span>`}</td>
              <td>${w.tid}</td>
              <td>
                ${w.job.jid ? html`<a href="${url(`${ctx.base}/jobs`, w.job.jid)}"><code>${w.job.jid}</code></a>` : ""}
              </td>
              <td>${w.queue}</td>
              <td>${w.job.displayClass ?? ""}</td>
              <td>
                <code>${truncate(w.job.argsSummary(), ARGS_PREVIEW)}</code
                >${iteration(w.job.jid ? progress.get(w.job.jid) : undefined)}
              </td>
              <td>${reported(w.progress)}</td>
              <td>${when(w.runAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return page("Busy", body);
}

/** What the job reported with `this.progress(n, data?)` (docs/outcomes.md), data cut for the table. */
function reported(progress: WorkProgress | undefined): ReturnType<typeof html> | string {
  if (!progress) return "";
  const data =
    progress.data === undefined ? "" : html` <code>${truncate(JSON.stringify(progress.data), ARGS_PREVIEW)}</code>`;
  const at = new Date(progress.at * 1000).toISOString().replace("T", " ").slice(0, 19);
  return html`<span class="badge" title="reported ${at} UTC">${String(progress.n)}</span>${data}`;
}

/** An iterable job's progress from it-<jid>, as Sidekiq's Busy page shows it. */
function iteration(state: IterationProgress | undefined): ReturnType<typeof html> | string {
  if (!state) return "";
  const cancelled = state.cancelled === undefined ? "" : "; cancelled";
  const text = `cursor=${truncate(state.cursor, ARGS_PREVIEW)}; exec=${state.executions}; rt=${state.runtime.toFixed(3)}s`;
  return html`<div><small>${text}${cancelled}</small></div>`;
}

/** `POST /busy`: `quiet` or `stop` one process (`identity`) or every non-embedded one. */
export async function busyAction(ctx: RequestContext): Promise<RouteResult> {
  const set = new ProcessSet(ctx.redis);
  const signal = ctx.form.has("stop") ? "stop" : ctx.form.has("quiet") ? "quiet" : null;
  if (signal === null) throw new HttpError(400, "say quiet or stop");
  const identity = ctx.form.get("identity");
  const targets = identity !== null ? [identity] : (await set.list()).filter((p) => !p.embedded).map((p) => p.identity);
  for (const id of targets) await (signal === "stop" ? set.stop(id) : set.quiet(id));
  ctx.audit(signal, identity ?? "all processes", targets.length);
  return redirect(`${ctx.base}/busy`);
}
