/**
 * Retries (`/retries`), Scheduled (`/scheduled`) and Dead (`/morgue`): a page at a time with ZRANGE,
 * newest first, an optional `substr` filter (ZSCAN, capped), checkboxes with bulk actions, the "all"
 * actions, and a page per entry (`/<set>/<score>-<jid>`, Sidekiq's key).
 */
import { DeadSet, RetrySet, ScheduledSet, type JobSet, type SortedEntry } from "../../api/index.js";
import { HttpError, intParam, json, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html, truncate, url } from "../html.js";
import { button, form, isTimeField, pager, stamp, when } from "../layout.js";
import { ARGS_PREVIEW } from "./busy.js";
import { paceInput, paceOf, pacedNotice, startPacedRetry } from "./bulk.js";
import { jobStatus } from "./job.js";

export type SetAction = "retry" | "delete" | "kill" | "add_to_queue";

interface SetKind {
  path: "retries" | "scheduled" | "morgue";
  title: string;
  make(ctx: RequestContext): JobSet;
  actions: SetAction[];
  /** What the score means on this set. */
  scoreLabel: string;
}

export const SET_KINDS: Record<SetKind["path"], SetKind> = {
  retries: {
    path: "retries",
    title: "Retries",
    make: (ctx) => new RetrySet(ctx.redis),
    actions: ["retry", "add_to_queue", "delete", "kill"],
    scoreLabel: "Next retry",
  },
  scheduled: {
    path: "scheduled",
    title: "Scheduled",
    make: (ctx) => new ScheduledSet(ctx.redis),
    actions: ["add_to_queue", "delete"],
    scoreLabel: "When",
  },
  morgue: {
    path: "morgue",
    title: "Dead",
    make: (ctx) => new DeadSet(ctx.redis),
    actions: ["retry", "delete"],
    scoreLabel: "Died",
  },
};

const LABELS: Record<SetAction, string> = {
  retry: "Retry now",
  delete: "Delete",
  kill: "Kill",
  add_to_queue: "Add to queue",
};
const DEFAULT_COUNT = 25;
const MAX_COUNT = 1000;
/** Entries a `substr` filter examines at most (ZSCAN), so a filter on a huge set stays bounded. */
const FILTER_CAP = 10_000;

export function entryKey(entry: SortedEntry): string {
  return `${entry.score}-${entry.jid ?? ""}`;
}

/** Runs one action on one entry; false when the entry was gone. */
export function act(entry: SortedEntry, action: SetAction): Promise<boolean> {
  switch (action) {
    case "retry":
      return entry.retry();
    case "delete":
      return entry.delete();
    case "kill":
      return entry.kill();
    case "add_to_queue":
      return entry.addToQueue();
  }
}

function chosenAction(kind: SetKind, form: URLSearchParams): SetAction {
  const action = kind.actions.find((a) => form.has(a));
  if (!action) throw new HttpError(400, `choose one of: ${kind.actions.join(", ")}`);
  return action;
}

export async function findEntry(set: JobSet, key: string): Promise<SortedEntry | null> {
  const dash = key.indexOf("-");
  const score = Number(key.slice(0, dash));
  if (dash < 1 || !Number.isFinite(score)) return null;
  const jid = key.slice(dash + 1);
  return (await set.fetch(score, jid))[0] ?? null;
}

function entryRow(ctx: RequestContext, kind: SetKind, e: SortedEntry): ReturnType<typeof html> {
  const link = url(`${ctx.base}/${kind.path}`, entryKey(e));
  const error = e.errorClass
    ? html`<div class="error">${e.errorClass}: ${truncate(e.errorMessage ?? "", 200)}</div>`
    : "";
  return html`<tr>
    ${ctx.readOnly ? "" : html`<td><input type="checkbox" name="key" value="${entryKey(e)}" form="bulk" class="select" /></td>`}
    <td><a href="${link}">${when(e.score)}</a></td>
    <td>${e.queue}</td>
    <td>${e.displayClass ?? html`<span class="badge warn">not a job</span>`}</td>
    <td><code>${truncate(e.argsSummary(), ARGS_PREVIEW)}</code>${error}</td>
    <td>${e.retryCount ?? ""}</td>
  </tr>`;
}

export function setList(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const set = kind.make(ctx);
    const count = intParam(ctx.query, "count", DEFAULT_COUNT, 1, MAX_COUNT);
    const pageNo = intParam(ctx.query, "page", 1, 1, Number.MAX_SAFE_INTEGER);
    const substr = ctx.query.get("substr") ?? "";
    let entries: SortedEntry[];
    let total: number;
    let partial = false;
    if (substr) {
      entries = [];
      let examined = 0;
      for await (const e of set.scan(substr)) {
        if (++examined > FILTER_CAP) {
          partial = true;
          break;
        }
        entries.push(e);
      }
      entries.sort((a, b) => b.score - a.score);
      total = entries.length;
      entries = entries.slice((pageNo - 1) * count, pageNo * count);
    } else {
      [total, entries] = await Promise.all([set.size(), set.page((pageNo - 1) * count, count)]);
    }
    const base = `${ctx.base}/${kind.path}`;
    const body = html`<form method="get" action="${base}" class="filter">
        <input type="search" name="substr" value="${substr}" placeholder="Filter by text" /><button
          class="btn"
          type="submit"
        >
          Filter
        </button>
      </form>
      ${pacedNotice(ctx, kind.path)}${partial ? html`<p class="warn">Showing the first ${FILTER_CAP.toLocaleString("en-US")} matches only: the filter stopped there.</p>` : ""}
      ${form(
        ctx,
        base,
        kind.actions.map((a) => button(a, LABELS[a], a === "delete" || a === "kill" ? "btn danger" : "btn")),
        { id: "bulk", cls: "bulk", confirm: "Apply to the selected entries?" },
      )}
      ${pager(ctx, `/${kind.path}`, pageNo, count, total)}
      ${substr ? "" : html`<p><a class="btn" href="${base}/export?page=${pageNo}&amp;count=${count}">Export this page (JSON)</a></p>`}
      <table class="list">
        <thead>
          <tr>
            ${ctx.readOnly ? "" : html`<th><input type="checkbox" class="select-all" title="select all" /></th>`}
            <th>${kind.scoreLabel}</th>
            <th>Queue</th>
            <th>Job</th>
            <th>Arguments</th>
            <th>Retries</th>
          </tr>
        </thead>
        <tbody>
          ${entries.map((e) => entryRow(ctx, kind, e))}
        </tbody>
      </table>
      ${
        total > 0
          ? html`<h2>All ${total.toLocaleString("en-US")}</h2>
              ${kind.actions.filter((a) => a !== "add_to_queue" || kind.path === "scheduled").map((a) => form(ctx, `${base}/all/${a}`, [button(a, `${LABELS[a]} (all)`, a === "delete" || a === "kill" ? "btn danger" : "btn"), a === "retry" ? paceInput() : ""], { confirm: `${LABELS[a]}: every entry in ${kind.title}?` }))}`
          : ""
      }`;
    return page(kind.title, body);
  };
}

/** `POST /<set>`: the action named by the pressed button on every checked `key`. */
export function setBulk(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const action = chosenAction(kind, ctx.form);
    const set = kind.make(ctx);
    let done = 0;
    for (const key of ctx.form.getAll("key")) {
      const entry = await findEntry(set, key);
      if (entry && (await act(entry, action))) done++;
    }
    ctx.audit(action, kind.title, done);
    return redirect(`${ctx.base}/${kind.path}`);
  };
}

/** `POST /<set>/all/<action>`. */
export function setAll(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const action = ctx.params[0] as SetAction;
    if (!kind.actions.includes(action)) throw new HttpError(404, `${kind.title} has no "${action}" action`);
    const set = kind.make(ctx);
    const pace = action === "retry" ? paceOf(ctx) : undefined;
    if (pace !== undefined) return startPacedRetry(ctx, set, kind.path, kind.title, pace);
    let done: number;
    if (action === "delete") done = await set.clear();
    else if (action === "retry") done = await set.retryAll();
    else if (action === "kill") done = await set.killAll();
    else {
      done = 0;
      for await (const entry of set) if (await entry.addToQueue()) done++;
    }
    ctx.audit(`${action} all`, kind.title, done);
    return redirect(`${ctx.base}/${kind.path}`);
  };
}

/** `GET /<set>/<score>-<jid>`: every field, the error and the decoded backtrace. */
export function setEntry(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const entry = await findEntry(kind.make(ctx), ctx.params[0] ?? "");
    if (!entry) throw new HttpError(404, `no such entry in ${kind.title}; it may have been retried or removed`);
    const actions = form(
      ctx,
      url(`${ctx.base}/${kind.path}`, entryKey(entry)),
      kind.actions.map((a) => button(a, LABELS[a])),
    );
    const raw = html`<p>
      <a class="btn" href="${url(`${ctx.base}/${kind.path}`, entryKey(entry))}/json">Raw JSON</a>
    </p>`;
    const { panels } = entry.jid ? await jobStatus(ctx, entry.jid) : { panels: "" };
    return page(
      `${kind.title}: ${entry.displayClass ?? "entry"}`,
      html`${raw}${jobDetails(entry, kind.scoreLabel, await inflatedRow(entry))}${actions}${panels}`,
    );
  };
}

/** `POST /<set>/<score>-<jid>`. */
export function setEntryAction(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const action = chosenAction(kind, ctx.form);
    const entry = await findEntry(kind.make(ctx), ctx.params[0] ?? "");
    const done = entry ? await act(entry, action) : false;
    ctx.audit(action, `${kind.title} ${entry?.jid ?? ctx.params[0] ?? ""}`, done ? 1 : 0);
    return redirect(`${ctx.base}/${kind.path}`);
  };
}

/**
 * The most of a job's compressed args its page inflates (bytes of text): enough to read them, and a
 * bound on the work a hostile entry can cause (its args may inflate to gigabytes).
 */
export const PAGE_INFLATE_CAP = 1024 * 1024;

/** A row with the inflated args of a compressed job (cut at PAGE_INFLATE_CAP, and saying so). */
async function inflatedRow(entry: SortedEntry): Promise<ReturnType<typeof html> | ""> {
  let shown: ReturnType<typeof html>;
  try {
    const head = await entry.inflatedArgs(PAGE_INFLATE_CAP);
    if (head === undefined) return "";
    const note = head.cut
      ? html`<p class="warn">Cut at ${PAGE_INFLATE_CAP / 1024} KB: the args inflate to more than that.</p>`
      : "";
    shown = html`${note}
      <pre>${head.text}</pre>`;
  } catch (error) {
    shown = html`<p class="warn">${(error as Error).message}</p>`;
  }
  return html`<tr>
    <th>args (inflated)</th>
    <td>${shown}</td>
  </tr>`;
}

/** The job page body: a table of every stored field, then the error and backtrace. */
export function jobDetails(
  entry: SortedEntry,
  scoreLabel: string,
  extraRow: ReturnType<typeof html> | "" = "",
): ReturnType<typeof html> {
  const backtrace = entry.errorBacktrace();
  return html`<table class="kv">
      <tr>
        <th>${scoreLabel}</th>
        <td>${stamp(entry.score) ?? when(entry.score)}</td>
      </tr>
      ${Object.entries(entry.item).map(
        ([field, value]) =>
          html`<tr>
            <th>${field}</th>
            <td>
              ${
                (isTimeField(field) ? stamp(value) : null) ??
                html`<pre>${typeof value === "string" ? value : JSON.stringify(value, null, 2)}</pre>`
              }
            </td>
          </tr>`,
      )}${extraRow}${
        entry.isObject
          ? ""
          : html`<tr>
              <th>stored text</th>
              <td><pre>${entry.value}</pre></td>
            </tr>`
      }
    </table>
    ${
      entry.errorClass
        ? html`<h2>Error</h2>
            <pre class="error">${entry.errorClass}: ${entry.errorMessage ?? ""}</pre>`
        : ""
    }
    ${
      backtrace
        ? html`<h2>Backtrace</h2>
            <pre class="backtrace">${backtrace.join("\n")}</pre>`
        : ""
    }`;
}

/** An entry as exported: its score and the stored job, parsed (or its text when it is not JSON). */
function exported(entry: SortedEntry): Record<string, unknown> {
  return { score: entry.score, payload: entry.isObject ? entry.item : null, text: entry.isObject ? null : entry.value };
}

/** `GET /<set>/export?page=&count=`: one page of entries as a JSON download. */
export function setExport(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const count = intParam(ctx.query, "count", DEFAULT_COUNT, 1, MAX_COUNT);
    const pageNo = intParam(ctx.query, "page", 1, 1, Number.MAX_SAFE_INTEGER);
    const entries = await kind.make(ctx).page((pageNo - 1) * count, count);
    ctx.res.setHeader("content-disposition", `attachment; filename="${kind.path}-page-${pageNo}.json"`);
    return json(entries.map(exported));
  };
}

/** `GET /<set>/<score>-<jid>/json`: the whole stored entry. */
export function setEntryJson(kind: SetKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const entry = await findEntry(kind.make(ctx), ctx.params[0] ?? "");
    if (!entry) throw new HttpError(404, `no such entry in ${kind.title}; it may have been retried or removed`);
    return json(exported(entry));
  };
}
