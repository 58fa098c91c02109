/**
 * What is known of one job by its jid (`/jobs/:jid`), and the same two panels on a set entry's page:
 * its progress while it runs (the `progress` field of its work entry, `this.progress(n, data?)`) and its
 * stored outcome (the record an opted-in class keeps for `result.ttl`: the result or the error). Both come
 * from Redis and are shown as escaped text; a result is pretty-printed JSON, never markup.
 */
import { JobOutcomes, WorkSet, type StoredOutcome, type WorkRecord } from "../../api/index.js";
import { HttpError, page, type RequestContext, type RouteResult } from "../context.js";
import { html, type Html } from "../html.js";
import { stamp, when } from "../layout.js";

/** Characters of a stored result shown before it is cut (the record holds up to 64 KB by default). */
const RESULT_CHARS = 20_000;

export async function jobPage(ctx: RequestContext): Promise<RouteResult> {
  const jid = ctx.params[0] ?? "";
  if (!/^[\w-]{1,64}$/.test(jid)) throw new HttpError(400, "a jid is 1 to 64 letters, digits, '-' or '_'");
  const { panels, known } = await jobStatus(ctx, jid);
  const search = html`<p>
    <a class="btn" href="${ctx.base}/search?q=${encodeURIComponent(jid)}">Find it in the queues and sets</a>
  </p>`;
  const nothing = known
    ? ""
    : html`<p class="muted" id="job-unknown">
        Not running now, and no stored outcome: a class keeps one only with <code>result: { ttl }</code>, for that long.
      </p>`;
  return page(`Job ${jid}`, html`${nothing}${panels}${search}`);
}

/** The progress and outcome panels of `jid` (empty when neither exists), and whether either does. */
export async function jobStatus(ctx: RequestContext, jid: string): Promise<{ panels: Html; known: boolean }> {
  const [work, outcome] = await Promise.all([
    new WorkSet(ctx.redis).findWork(jid),
    new JobOutcomes(ctx.redis).get(jid),
  ]);
  return {
    panels: html`${work ? running(work) : ""}${outcome ? ended(outcome) : ""}`,
    known: work !== null || outcome !== undefined,
  };
}

function running(work: WorkRecord): Html {
  const p = work.progress;
  const bar = p && p.n >= 0 && p.n <= 100 ? html`<progress max="100" value="${p.n}"></progress> ` : "";
  return html`<section class="panel" id="job-running">
    <h2>Running <small>${work.job.displayClass ?? ""} on ${work.process}, since ${when(work.runAt)}</small></h2>
    ${
      p
        ? html`<table class="kv" id="job-progress">
            <tr>
              <th>Progress</th>
              <td>${bar}<span class="progress-n">${String(p.n)}</span></td>
            </tr>
            ${
              p.data === undefined
                ? ""
                : html`<tr>
                    <th>Progress data</th>
                    <td><pre>${JSON.stringify(p.data, null, 2)}</pre></td>
                  </tr>`
            }
            <tr>
              <th>Reported</th>
              <td>${stamp(p.at) ?? when(p.at)}</td>
            </tr>
          </table>`
        : html`<p class="muted">No progress reported (a job reports it with <code>this.progress(n, data?)</code>).</p>`
    }
  </section>`;
}

function ended(outcome: StoredOutcome): Html {
  const result = JSON.stringify(outcome.result, null, 2);
  const shown = result !== undefined && result.length > RESULT_CHARS ? `${result.slice(0, RESULT_CHARS)}…` : result;
  return html`<section class="panel" id="job-outcome">
    <h2>Outcome <small>the last recorded end</small></h2>
    <table class="kv">
      <tr>
        <th>Status</th>
        <td><span class="${outcome.status === "done" ? "badge" : "badge warn"}">${outcome.status}</span></td>
      </tr>
      ${
        outcome.at === undefined
          ? ""
          : html`<tr>
              <th>Ended</th>
              <td>${stamp(outcome.at) ?? when(outcome.at)}</td>
            </tr>`
      }
      ${
        outcome.class === undefined
          ? ""
          : html`<tr>
              <th>Class</th>
              <td><code>${outcome.class}</code></td>
            </tr>`
      }
      ${
        outcome.queue === undefined
          ? ""
          : html`<tr>
              <th>Queue</th>
              <td>${outcome.queue}</td>
            </tr>`
      }
      ${
        outcome.status === "done"
          ? html`<tr>
              <th>Result</th>
              <td>
                ${shown === undefined ? html`<span class="muted">nothing returned</span>` : html`<pre class="result">${shown}</pre>`}
              </td>
            </tr>`
          : ""
      }
      ${
        outcome.error
          ? html`<tr>
              <th>Error</th>
              <td>
                <pre class="error-text"><b>${outcome.error.class}</b>: ${outcome.error.message}</pre>
              </td>
            </tr>`
          : ""
      }
    </table>
  </section>`;
}
