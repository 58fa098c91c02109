/**
 * Queues (`/queues`) and one queue's jobs (`/queues/:name`), a page at a time with LRANGE, newest
 * first or oldest first (`direction=asc`); clear a queue, or delete one job by its exact text
 * (`POST /queues/:name/delete` with `key_val`, as Sidekiq); pause and unpause. Queues no live process
 * listens on, and paused ones, are flagged.
 */
import { ProcessSet, Queue } from "../../api/index.js";
import { HttpError, intParam, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html, truncate, url } from "../html.js";
import { button, form, pager, relative, when } from "../layout.js";
import { ARGS_PREVIEW } from "./busy.js";
import { whyWaiting } from "./why.js";

/** Sidekiq's rule for a queue name in a URL. */
const QUEUE_NAME = /^[a-z_:.\-0-9]+$/i;
const DEFAULT_COUNT = 25;
const MAX_COUNT = 1000;

function queueName(ctx: RequestContext): string {
  const name = ctx.params[0] ?? "";
  if (!QUEUE_NAME.test(name)) throw new HttpError(404, "no such queue (names are letters, digits and _:.-)");
  return name;
}

export async function queues(ctx: RequestContext): Promise<RouteResult> {
  const [all, processes] = await Promise.all([
    Queue.all(ctx.redis),
    new ProcessSet(ctx.redis).list({ cleanup: false }),
  ]);
  const listened = new Set(processes.flatMap((p) => p.queues.map((q) => q.split(",")[0]!)));
  const rows = await Promise.all(
    all.map(async (q) => ({
      name: q.name,
      size: await q.size(),
      latency: await q.latency(),
      paused: await q.paused(),
    })),
  );
  const body = html`<table class="list">
    <thead>
      <tr>
        <th>Queue</th>
        <th>Size</th>
        <th>Latency</th>
        <th></th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (q) =>
          html`<tr>
            <td>
              <a href="${url(`${ctx.base}/queues`, q.name)}">${q.name}</a
              >${listened.has(q.name) ? "" : html` <span class="badge warn" title="no live process fetches from this queue">no consumer</span>`}${q.paused ? html` <span class="badge warn" title="in the paused set: workers fetch nothing from it">paused</span>` : ""}
            </td>
            <td>${q.size.toLocaleString("en-US")}</td>
            <td>${q.size ? relative(-q.latency).replace(" ago", "") : "–"}</td>
            <td>
              ${form(ctx, url(`${ctx.base}/queues`, q.name), q.paused ? button("unpause", "Unpause", "btn") : button("pause", "Pause", "btn"))}
              ${form(ctx, url(`${ctx.base}/queues`, q.name), button("delete", "Delete", "btn danger"), { confirm: `Delete every job in ${q.name}?` })}
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
  return page("Queues", body);
}

export async function queuePage(ctx: RequestContext): Promise<RouteResult> {
  const name = queueName(ctx);
  const queue = new Queue(ctx.redis, name);
  const count = intParam(ctx.query, "count", DEFAULT_COUNT, 1, MAX_COUNT);
  const pageNo = intParam(ctx.query, "page", 1, 1, Number.MAX_SAFE_INTEGER);
  const asc = ctx.query.get("direction") === "asc";
  const [size, jobs] = await Promise.all([queue.size(), queue.page((pageNo - 1) * count, count, asc)]);
  const path = `/queues/${encodeURIComponent(name)}`;
  const classes = jobs.flatMap((job) => [job.klass, job.displayClass]).filter((c): c is string => c !== undefined);
  const reasons = size > 0 ? await whyWaiting(ctx.redis, name, classes) : [];
  const body = html`${
      size > 0
        ? html`<details class="why" ${reasons.length > 0 ? "open" : ""}>
            <summary>Why are these jobs not running?</summary>
            ${
              reasons.length > 0
                ? html`<ul>
                    ${reasons.map((reason) => html`<li>${reason}</li>`)}
                  </ul>`
                : html`<p>
                    Nothing stops them: a live process fetches from this queue and has free slots; they wait their turn.
                  </p>`
            }
          </details>`
        : ""
    }
    <p>
      <a class="btn" href="${ctx.base}${path}?direction=${asc ? "desc" : "asc"}"
        >${asc ? "Newest first" : "Oldest first"}</a
      >
    </p>
    ${pager(ctx, path, pageNo, count, size)}
    <table class="list">
      <thead>
        <tr>
          <th>Job</th>
          <th>JID</th>
          <th>Arguments</th>
          <th>Enqueued</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${jobs.map(
          (job) =>
            html`<tr>
              <td>
                ${job.displayClass ?? html`<span class="badge warn">not a job</span>`}${job.tags.map((t) => html` <span class="badge">${t}</span>`)}
              </td>
              <td><code>${job.jid ?? ""}</code></td>
              <td><code>${truncate(job.argsSummary(), ARGS_PREVIEW)}</code></td>
              <td>${job.enqueuedAt ? when(job.enqueuedAt) : ""}</td>
              <td>
                ${form(ctx, `${ctx.base}${path}/delete`, html`<input type="hidden" name="key_val" value="${job.value}" />${button("delete", "Delete", "btn danger")}`)}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return page(`Queue ${name}`, body);
}

/**
 * `POST /queues/:name`: clears the queue (Sidekiq's `delete` button), or pauses or unpauses it (the
 * `paused` set, as Sidekiq Pro's buttons): every worker applies a pause within 1 s.
 */
export async function queueAction(ctx: RequestContext): Promise<RouteResult> {
  const name = queueName(ctx);
  const queue = new Queue(ctx.redis, name);
  if (ctx.form.has("pause") || ctx.form.has("unpause")) {
    const pausing = ctx.form.has("pause");
    const changed = pausing ? await queue.pause() : await queue.unpause();
    ctx.audit(pausing ? "pause queue" : "unpause queue", name, changed ? 1 : 0);
  } else {
    ctx.audit("clear queue", name, await queue.clear());
  }
  return redirect(`${ctx.base}/queues`);
}

/** `POST /queues/:name/delete`: removes the job whose text is `key_val`. */
export async function deleteQueueJob(ctx: RequestContext): Promise<RouteResult> {
  const name = queueName(ctx);
  const value = ctx.form.get("key_val");
  if (value === null) throw new HttpError(400, "key_val (the job's JSON) is missing");
  const removed = await new Queue(ctx.redis, name).deleteJob(value);
  ctx.audit("delete job", `queue ${name}`, removed ? 1 : 0);
  return redirect(`${ctx.base}/queues/${encodeURIComponent(name)}`);
}
