/**
 * Search (`/search?q=`): one text across every queue, the retry, scheduled and dead sets and the jobs
 * running now, matched against each job's stored JSON (so jid, class, queue, error and args all
 * match). Bounded: queues are read a page at a time and the walk stops after `SCAN_CAP` jobs; the
 * sets use ZSCAN MATCH; at most `RESULT_CAP` results. The page says when it stopped early.
 */
import { Queue, WorkSet, type JobRecord } from "../../api/index.js";
import { HttpError, intParam, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html, truncate, url } from "../html.js";
import { button, form } from "../layout.js";
import { ARGS_PREVIEW } from "./busy.js";
import { SET_KINDS, act, entryKey, findEntry, type SetAction } from "./sets.js";

/** Queue jobs examined at most per search. */
export const SCAN_CAP = 100_000;
/** Results shown at most. */
export const RESULT_CAP = 500;

interface Hit {
  where: string;
  link: string;
  job: JobRecord;
  /** `<set>:<score>-<jid>` for an entry of a sorted set, which bulk actions can act on. */
  key?: string;
}

/** What the search result's bulk form can do (on set entries only; each set allows its own actions). */
const BULK: SetAction[] = ["retry", "delete"];

export async function search(ctx: RequestContext): Promise<RouteResult> {
  const q = (ctx.query.get("q") ?? "").trim();
  const cap = intParam(ctx.query, "cap", SCAN_CAP, 1, SCAN_CAP);
  const hits: Hit[] = [];
  let partial = false;
  let examined = 0;
  if (q) {
    const full = () => hits.length >= RESULT_CAP;
    for (const work of await new WorkSet(ctx.redis).list())
      if (work.job.value.includes(q) && !full())
        hits.push({ where: `running on ${work.process}`, link: `${ctx.base}/busy`, job: work.job });
    for (const kind of Object.values(SET_KINDS)) {
      for await (const entry of kind.make(ctx).scan(q)) {
        if (full()) break;
        hits.push({
          where: kind.title,
          link: url(`${ctx.base}/${kind.path}`, entryKey(entry)),
          job: entry,
          key: `${kind.path}:${entryKey(entry)}`,
        });
      }
    }
    walk: for (const queue of await Queue.all(ctx.redis)) {
      for await (const job of queue.each(500)) {
        if (++examined > cap || full()) {
          partial = true;
          break walk;
        }
        if (job.value.includes(q))
          hits.push({ where: `queue ${queue.name}`, link: url(`${ctx.base}/queues`, queue.name), job });
      }
    }
    if (full()) partial = true;
  }
  const body = html`<form method="get" action="${ctx.base}/search" class="filter">
      <input
        type="search"
        name="q"
        value="${q}"
        placeholder="jid, class, queue, error or text in args"
        autofocus
      /><button class="btn" type="submit">Search</button>
    </form>
    ${q ? html`<p class="${partial ? "warn" : "muted"}" id="search-summary">${hits.length} result${hits.length === 1 ? "" : "s"}${partial ? html` (partial: stopped after ${Math.min(examined, cap).toLocaleString("en-US")} queued jobs or ${RESULT_CAP} results; narrow the search)` : ""}</p>` : ""}
    ${
      hits.some((h) => h.key)
        ? form(
            ctx,
            `${ctx.base}/search?q=${encodeURIComponent(q)}`,
            BULK.map((a) =>
              button(a, a === "retry" ? "Retry selected" : "Delete selected", a === "delete" ? "btn danger" : "btn"),
            ),
            { id: "bulk", cls: "bulk", confirm: "Apply to the selected retries, scheduled and dead jobs?" },
          )
        : ""
    }
    <table class="list">
      <thead>
        <tr>
          ${ctx.readOnly ? "" : html`<th><input type="checkbox" class="select-all" title="select all" /></th>`}
          <th>Where</th>
          <th>Job</th>
          <th>JID</th>
          <th>Arguments</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        ${hits.map(
          (h) =>
            html`<tr>
              ${
                ctx.readOnly
                  ? ""
                  : html`<td>
                      ${h.key ? html`<input type="checkbox" name="key" value="${h.key}" form="bulk" class="select" />` : ""}
                    </td>`
              }
              <td><a href="${h.link}">${h.where}</a></td>
              <td>${h.job.displayClass ?? ""}</td>
              <td><code>${h.job.jid ?? ""}</code></td>
              <td><code>${truncate(h.job.argsSummary(), ARGS_PREVIEW)}</code></td>
              <td>${h.job.errorClass ? `${h.job.errorClass}: ${truncate(h.job.errorMessage ?? "", 120)}` : ""}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return page("Search", body);
}

/**
 * `POST /search`: retry or delete the checked set entries of a result (at most `RESULT_CAP`, the most a
 * result shows). An action a set does not offer (retrying a scheduled job) is skipped.
 */
export async function searchAction(ctx: RequestContext): Promise<RouteResult> {
  const action = BULK.find((a) => ctx.form.has(a));
  if (!action) throw new HttpError(400, "say retry or delete");
  let done = 0;
  for (const key of ctx.form.getAll("key").slice(0, RESULT_CAP)) {
    const colon = key.indexOf(":");
    const name = key.slice(0, colon);
    // Own keys only: "constructor" or "__proto__" from a hostile form must not reach Object's members.
    const kind = Object.hasOwn(SET_KINDS, name) ? SET_KINDS[name as keyof typeof SET_KINDS] : undefined;
    if (!kind || !kind.actions.includes(action)) continue;
    const entry = await findEntry(kind.make(ctx), key.slice(colon + 1));
    if (entry && (await act(entry, action))) done++;
  }
  ctx.audit(`${action} search result`, ctx.query.get("q") ?? "", done);
  return redirect(`${ctx.base}/search?q=${encodeURIComponent(ctx.query.get("q") ?? "")}`);
}
