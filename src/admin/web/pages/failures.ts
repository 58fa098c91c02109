/**
 * Failures grouped by error signature (`/failures`): the retry and dead sets' entries grouped by error
 * class plus the message with numbers, ids and quoted values blanked, so "Timeout after 3012 ms" and
 * "Timeout after 5120 ms" are one group. Each group can be retried or deleted at once. Bounded: the
 * newest `GROUP_CAP` entries of each set are read, a page at a time.
 */
import type { SortedEntry } from "../../api/index.js";
import { HttpError, page, redirect, type RequestContext, type RouteResult } from "../context.js";
import { html } from "../html.js";
import { button, form } from "../layout.js";
import { SET_KINDS, act } from "./sets.js";
import { paceInput, paceOf, startPaced } from "./bulk.js";
import { paceEach } from "../../api/index.js";

/** Entries read per set at most. */
export const GROUP_CAP = 10_000;
const PAGE = 500;

/** `ErrorClass: message` with variable parts blanked. */
export function signature(entry: SortedEntry): string {
  const message = (entry.errorMessage ?? "")
    .replace(/(["'`]).*?\1/g, "$1…$1")
    .replace(/\b[0-9a-f]{8,}\b/gi, "X")
    .replace(/\d+(\.\d+)?/g, "N")
    .slice(0, 200);
  return `${entry.errorClass ?? "(no error)"}: ${message}`;
}

type FailureSet = "retries" | "morgue";

async function entries(ctx: RequestContext, which: FailureSet): Promise<{ list: SortedEntry[]; partial: boolean }> {
  const set = SET_KINDS[which].make(ctx);
  const list: SortedEntry[] = [];
  for (let start = 0; start < GROUP_CAP; start += PAGE) {
    const batch = await set.page(start, PAGE);
    list.push(...batch);
    if (batch.length < PAGE) return { list, partial: false };
  }
  return { list, partial: (await set.size()) > list.length };
}

export async function failures(ctx: RequestContext): Promise<RouteResult> {
  const sections = [];
  for (const which of ["retries", "morgue"] as const) {
    const { list, partial } = await entries(ctx, which);
    const groups = new Map<string, number>();
    for (const e of list) groups.set(signature(e), (groups.get(signature(e)) ?? 0) + 1);
    const sorted = [...groups].sort((a, b) => b[1] - a[1]);
    sections.push(
      html`<h2>${SET_KINDS[which].title}</h2>
        ${partial ? html`<p class="warn">Grouped the newest ${GROUP_CAP.toLocaleString("en-US")} entries only.</p>` : ""}
        <table class="list">
          <thead>
            <tr>
              <th>Count</th>
              <th>Signature</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${sorted.map(
              ([sig, n]) =>
                html`<tr>
                  <td>${n}</td>
                  <td><code>${sig}</code></td>
                  <td>
                    ${form(ctx, `${ctx.base}/failures`, html`<input type="hidden" name="set" value="${which}" /><input type="hidden" name="signature" value="${sig}" />${button("retry", "Retry group")}${paceInput()}${button("delete", "Delete group", "btn danger")}`, { confirm: `Act on ${n} entries?` })}
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>`,
    );
  }
  return page("Failures", html`${sections}`);
}

/** `POST /failures`: retry or delete every entry of one group (within the same bound). */
export async function failuresAction(ctx: RequestContext): Promise<RouteResult> {
  const which = ctx.form.get("set");
  if (which !== "retries" && which !== "morgue") throw new HttpError(400, "set must be retries or morgue");
  const sig = ctx.form.get("signature") ?? "";
  const action = ctx.form.has("retry") ? "retry" : ctx.form.has("delete") ? "delete" : null;
  if (action === null) throw new HttpError(400, "say retry or delete");
  const group = (await entries(ctx, which)).list.filter((e) => signature(e) === sig);
  const pace = action === "retry" ? paceOf(ctx) : undefined;
  if (pace !== undefined) {
    const title = `${SET_KINDS[which].title}: ${sig}`;
    return startPaced(ctx, {
      path: which,
      title,
      total: group.length,
      perSecond: pace,
      run: (p) => paceEach(group, p, (e) => e.retry()),
    });
  }
  let done = 0;
  for (const e of group) if (await act(e, action)) done++;
  ctx.audit(`${action} group`, `${SET_KINDS[which].title} ${sig}`, done);
  return redirect(`${ctx.base}/failures`);
}
