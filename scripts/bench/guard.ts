// The guard of `npm run bench -- --compare <build>`: which figures of this checkout grew past their
// limits against the build compared, per fetch. The bench prints them and exits 3 when there are any.
//
// Worker CPU per job is the figure of merit: a busy neighbour takes the CPU the worker waits for, which
// lowers jobs/s far more than it raises the worker's own CPU per job. RSS peaks of one build vary more
// between rounds (a collection that lands just before or after the peak sample): twice the margin.
// The medians are over every round of both builds, busy ones included: the two took turns, so a busy
// round weighs on both alike, where leaving it out (as the summary does) can leave each build a
// different set of rounds. On a busy machine even these move by more than 5%: the bench prints the
// load before and after, and a failure there is worth a second run before it is believed.
import { fmtMb } from "./lib.js";
import { fixed, median, type Report, type Run } from "./report.js";

/** Largest worker CPU per job allowed, as a multiple of the compared build's. */
export const CPU_LIMIT = 1.05;
/** Largest RSS peak allowed, as a multiple of the compared build's. */
export const RSS_LIMIT = 1.1;

/** Per system, P and C: the medians over every round of worker CPU per job and of the RSS peak. */
function medians(runs: readonly Run[], system: string, processes: number, concurrency: number) {
  const rounds = runs.filter((r) => r.system === system && r.processes === processes && r.concurrency === concurrency);
  return {
    cpu: median(rounds.map((r) => r.workerCpuMicrosPerJob)),
    rss: median(rounds.map((r) => Math.max(0, ...r.rssKb.perChildPeak.map((kb) => kb ?? 0)) || null)),
  };
}

/** The figures that failed, one line each (empty: the change passes). */
export function guardFailures(report: Pick<Report, "runs" | "summary" | "options">): string[] {
  const failures: string[] = [];
  for (const before of report.summary.filter((s) => s.system.endsWith("-before"))) {
    const { processes, concurrency } = before;
    const now = medians(report.runs, before.system.replace(/-before$/, ""), processes, concurrency);
    const then = medians(report.runs, before.system, processes, concurrency);
    const fetch = before.system.includes("reliable") || report.options.fetch === "reliable" ? "reliable" : "basic";
    const where = `${fetch} fetch, P=${processes} C=${concurrency}`;
    if (now.cpu !== null && then.cpu !== null && now.cpu > then.cpu * CPU_LIMIT)
      failures.push(
        `${where}: worker CPU ${fixed(now.cpu, 1)} µs/job vs ${fixed(then.cpu, 1)} (${percent(now.cpu / then.cpu)}, limit +5%)`,
      );
    if (now.rss !== null && then.rss !== null && now.rss > then.rss * RSS_LIMIT)
      failures.push(
        `${where}: RSS peak ${fmtMb(now.rss)} MB vs ${fmtMb(then.rss)} (${percent(now.rss / then.rss)}, limit +10%)`,
      );
  }
  return failures;
}

const percent = (ratio: number): string => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;
