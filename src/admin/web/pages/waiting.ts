/**
 * `/waiting`: durable jobs parked in `schedule` (src/admin/api/ParkedJobs.ts): those waiting on an event
 * (which one, since when, their deadline) and those sleeping (their wake time). Read-only. Every class,
 * event and jid is text from Redis and goes through `html` (escaped).
 */
import { ParkedJobs, type SleepingJob, type WaitingJob } from "../../api/ParkedJobs.js";
import { intParam, page, type RequestContext, type RouteResult } from "../context.js";
import { html, truncate } from "../html.js";
import { when } from "../layout.js";

/** Jobs of each kind listed at most (the list reads the whole `schedule`; this bounds the page). */
const MAX_LIMIT = 5000;

function waitingRow(job: WaitingJob, now: number): ReturnType<typeof html> {
  return html`<tr>
    <td><code>${job.jid}</code></td>
    <td>${truncate(job.class, 80)}</td>
    <td><code>${truncate(job.event, 120)}</code></td>
    <td>${when(job.since, now)}</td>
    <td>${job.deadline === 0 ? html`<span class="badge">signalled</span>` : when(job.deadline, now)}</td>
  </tr>`;
}

function sleepingRow(job: SleepingJob, now: number): ReturnType<typeof html> {
  return html`<tr>
    <td><code>${job.jid}</code></td>
    <td>${truncate(job.class, 80)}</td>
    <td>${truncate(job.queue, 80)}</td>
    <td>${when(job.wakeAt, now)}</td>
  </tr>`;
}

export async function waiting(ctx: RequestContext): Promise<RouteResult> {
  const limit = intParam(ctx.query, "limit", 500, 1, MAX_LIMIT);
  const list = await new ParkedJobs(ctx.redis).list({ limit });
  const now = Date.now() / 1000;
  const body = html`<h3>Waiting on an event (${list.waiting.length})</h3>
    ${
      list.waiting.length
        ? html`<table class="list" id="waiting-table">
            <thead>
              <tr>
                <th>JID</th>
                <th>Class</th>
                <th>Event</th>
                <th>Since</th>
                <th>Deadline</th>
              </tr>
            </thead>
            <tbody>
              ${list.waiting.map((job) => waitingRow(job, now))}
            </tbody>
          </table>`
        : html`<p class="muted">No durable job is waiting on an event.</p>`
    }
    <h3>Sleeping (${list.sleeping.length})</h3>
    ${
      list.sleeping.length
        ? html`<table class="list" id="sleeping-table">
            <thead>
              <tr>
                <th>JID</th>
                <th>Class</th>
                <th>Queue</th>
                <th>Wakes</th>
              </tr>
            </thead>
            <tbody>
              ${list.sleeping.map((job) => sleepingRow(job, now))}
            </tbody>
          </table>`
        : html`<p class="muted">No durable job is sleeping.</p>`
    }
    ${list.truncated ? html`<p class="muted">More are parked than shown (limit ${limit}).</p>` : ""}`;
  return page("Waiting", body);
}
