/**
 * RunningJobs: the `tsq_running_jobs{queue,class}` gauge of one process, read from its work table when
 * collected rather than counted from events: a job whose failure could not be recorded is requeued
 * without an `end` event, and must not stay "running". Every queue × class that has started a job here
 * keeps its series, at 0 when idle, so a graph shows zero rather than a gap whenever the scrape lands.
 *
 * Labels are the capped ones (LabelCap) the job's other series use, so a folded class runs as "other".
 */
import type { ServerContext } from "../server/context.js";
import type { MetricFamily, Sample } from "./exposition.js";
import type { LabelCap } from "./LabelCap.js";

export class RunningJobs {
  /** queue \0 class (capped) of every pair that has started a job here. */
  private readonly ran = new Set<string>();

  constructor(
    private readonly state: ServerContext["state"],
    private readonly cap: LabelCap,
  ) {}

  /** A job of this capped queue × class started. */
  started(queue: string, klass: string): void {
    this.ran.add(`${queue}\0${klass}`);
  }

  family(): MetricFamily {
    const counts = new Map<string, number>();
    for (const entry of this.state.work.values()) {
      const key = `${this.cap.value("queue", entry.queue)}\0${this.cap.value("class", entry.className ?? "unknown")}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const values: Sample[] = [];
    for (const key of this.ran) {
      const [queue, klass] = key.split("\0") as [string, string];
      values.push({ value: counts.get(key) ?? 0, labels: { queue, class: klass } });
    }
    return { name: "tsq_running_jobs", help: "Jobs running now.", type: "gauge", values };
  }
}
