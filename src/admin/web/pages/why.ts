/**
 * "Why are these jobs not running?" for a queue page: every reason tsq can see in Redis that jobs of a
 * queue wait, each with what to do about it. Read-only, a handful of small reads (the paused set, the
 * process records, the kill switches and the concurrency limits), so it costs a page view nothing.
 */
import type { Redis } from "ioredis";
import { ProcessSet, Queue } from "../../api/index.js";
import { readSwitches } from "../../../features/flow/kill-switches/switches.js";
import { readLimits } from "../../../features/locks/gitlab-concurrency-limits/status.js";
import { html, type Html } from "../html.js";

/** Why the jobs of `queue` (of the classes on the page shown) may not be running; empty if nothing stops them. */
export async function whyWaiting(redis: Redis, queue: string, classes: readonly string[]): Promise<Html[]> {
  const reasons: Html[] = [];
  const [paused, processes, switches, limits] = await Promise.all([
    new Queue(redis, queue).paused(),
    new ProcessSet(redis).list({ cleanup: false }),
    readSwitches(redis),
    readLimits(redis),
  ]);
  if (paused)
    reasons.push(
      html`The queue is <strong>paused</strong> (in the <code>paused</code> set): no worker fetches from it. Unpause it
        on the Queues page or with <code>tsqctl unpause ${queue}</code>.`,
    );
  const listening = processes.filter((p) => p.queues.some((q) => q.split(",")[0] === queue));
  if (listening.length === 0)
    reasons.push(
      html`No live process fetches from this queue. Start one that does (<code>tsq -q ${queue}</code>, or add the queue
        to a process group).`,
    );
  else if (listening.every((p) => p.quiet))
    reasons.push(html`Every process that fetches from this queue is quiet (stopping): none takes new jobs.`);
  else {
    const [busy, slots] = listening.reduce(([b, c], p) => [b + p.busy, c + p.concurrency], [0, 0]);
    if (slots > 0 && busy >= slots)
      reasons.push(
        html`Every process that fetches from this queue is busy (${busy} of ${slots} job slots): jobs wait for a free
        slot.`,
      );
  }
  const shown = new Set(classes);
  for (const [klass, change] of switches) {
    if (!shown.has(klass)) continue;
    reasons.push(
      change.action === "defer"
        ? html`<strong>${klass}</strong> is deferred by a kill switch: its jobs are re-scheduled ${change.delay} s later
            instead of running. <code>tsqctl resume ${klass}</code> lifts it.`
        : html`<strong>${klass}</strong> is dropped by a kill switch: its jobs are discarded unrun.
            <code>tsqctl resume ${klass}</code> lifts it.`,
    );
  }
  for (const limit of limits) {
    if (!shown.has(limit.class)) continue;
    if (limit.limit < 0)
      reasons.push(html`<strong>${limit.class}</strong> is paused by its concurrency limit (${limit.parked} parked).`);
    else if (limit.limit > 0 && limit.running >= limit.limit)
      reasons.push(
        html`<strong>${limit.class}</strong> is at its concurrency limit (${limit.running} of ${limit.limit} running,
          ${limit.parked} parked): the next one starts when one ends.`,
      );
  }
  return reasons;
}
