/**
 * What `tsqctl top` shows, as a pure function of the data (so it can be tested without a terminal),
 * plus the processed/failed rate meter.
 */
import type { ProcessRecord, StatsSnapshot } from "../api/index.js";
import { clip, delimit, duration, megabytes, relative, table, visible } from "./format.js";
import { processTags } from "./processes.js";
import type { QueueJson } from "./views.js";

export interface TopData {
  stats: StatsSnapshot;
  processes: ProcessRecord[];
  queues: QueueJson[];
  /** Epoch seconds the data was read. */
  now: number;
}

export interface Rates {
  processed: number | null;
  failed: number | null;
}

/**
 * Jobs per second over the last `windowSeconds`. Counters reach Redis only at each process's
 * heartbeat (every 10 s), so a rate over one 2 s refresh would swing between 0 and bursts.
 */
export class RateMeter {
  private readonly samples: { at: number; processed: number; failed: number }[] = [];

  constructor(private readonly windowSeconds = 30) {}

  /** `at` is monotonic seconds (performance.now() / 1000). */
  add(at: number, processed: number, failed: number): Rates {
    this.samples.push({ at, processed, failed });
    while (this.samples.length > 2 && at - this.samples[0]!.at > this.windowSeconds) this.samples.shift();
    const first = this.samples[0]!;
    const elapsed = at - first.at;
    // A reset (Stats#reset) or the first sample: no rate yet.
    if (elapsed <= 0 || processed < first.processed || failed < first.failed) return { processed: null, failed: null };
    return { processed: (processed - first.processed) / elapsed, failed: (failed - first.failed) / elapsed };
  }
}

function rate(value: number | null): string {
  return value === null ? "…/s" : `${value.toFixed(1)}/s`;
}

/** Keeps the first `max` lines of a table (header included) and says how many were left out. */
function cap(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  const kept = Math.max(max - 1, 1);
  return [...lines.slice(0, kept), `… ${lines.length - kept} more`];
}

export interface Screen {
  columns: number;
  rows: number;
}

/** The lines of one frame, each clipped to the screen width, at most `screen.rows` of them. */
export function renderTop(data: TopData, rates: Rates, screen: Screen, header: string, warning?: string): string[] {
  const { stats, processes, queues, now } = data;
  const concurrency = processes.reduce((sum, p) => sum + p.concurrency, 0);
  const busy = processes.reduce((sum, p) => sum + p.busy, 0);
  const overview = [
    `Processed ${delimit(stats.processed)} (${rate(rates.processed)})`,
    `Failed ${delimit(stats.failed)} (${rate(rates.failed)})`,
    `Busy ${delimit(busy)}/${delimit(concurrency)}`,
    `Enqueued ${delimit(stats.enqueued)}`,
    `Retries ${delimit(stats.retrySize)}`,
    `Scheduled ${delimit(stats.scheduledSize)}`,
    `Dead ${delimit(stats.deadSize)}`,
  ].join("   ");
  const processTable = table(
    ["PROCESS", "TAGS", "BUSY/CONC", "RSS", "LAST BEAT", "STARTED", "QUEUES"],
    processes.map((p) => [
      p.identity,
      processTags(p),
      `${p.busy}/${p.concurrency}`,
      megabytes(p.rssKb),
      relative(p.beat, now),
      relative(p.startedAt, now),
      p.queues.join(","),
    ]),
    new Set([2, 3]),
  );
  const queueTable = table(
    ["QUEUE", "SIZE", "LATENCY"],
    queues.map((q) => [q.name, delimit(q.size), duration(q.latency)]),
    new Set([1, 2]),
  );
  const top = [header, ...(warning ? [warning] : []), "", overview, "", `PROCESSES (${processes.length})`];
  // Whatever room is left is shared: processes get up to half, queues the rest.
  const room = Math.max(screen.rows - top.length - 2, 4);
  const shownProcesses = cap(processes.length === 0 ? ["(none)"] : processTable, Math.max(Math.floor(room / 2), 2));
  const shownQueues = cap(queues.length === 0 ? ["(none)"] : queueTable, Math.max(room - shownProcesses.length, 2));
  const lines = [...top, ...shownProcesses, "", `QUEUES (${queues.length})`, ...shownQueues];
  return lines.slice(0, screen.rows).map((line) => clip(visible(line), screen.columns));
}
