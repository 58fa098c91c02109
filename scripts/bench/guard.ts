// The guard of `npm run bench -- --compare <build>`: which figures of this checkout grew past their
// limits against the build compared, per fetch. The bench prints them and exits 3 when there are any.
//
// Worker CPU per job is the figure of merit: a busy neighbour takes the CPU the worker waits for, which
// lowers jobs/s far more than it raises the worker's own CPU per job. RSS peaks of one build vary more
// between rounds (a collection that lands just before or after the peak sample): twice the margin. On
// a busy machine even medians of interleaved rounds move by more than 5%: the bench prints the load
// before and after, and a failure there is worth a second run before it is believed.
import { fmtMb } from "./lib.js";
import { fixed, type Report } from "./report.js";

/** Largest worker CPU per job allowed, as a multiple of the compared build's. */
export const CPU_LIMIT = 1.05;
/** Largest RSS peak allowed, as a multiple of the compared build's. */
export const RSS_LIMIT = 1.1;

/** The figures that failed, one line each (empty: the change passes). */
export function guardFailures(report: Pick<Report, "changeRatios">): string[] {
  const failures: string[] = [];
  for (const r of report.changeRatios ?? []) {
    const where = `${r.fetch} fetch, P=${r.processes} C=${r.concurrency}`;
    const cpu = r.workerCpuMicrosPerJob;
    const cpuBefore = r.workerCpuMicrosPerJobBefore;
    if (cpu != null && cpuBefore != null && cpu > cpuBefore * CPU_LIMIT)
      failures.push(
        `${where}: worker CPU ${fixed(cpu, 1)} µs/job vs ${fixed(cpuBefore, 1)} (${percent(cpu / cpuBefore)}, limit +5%)`,
      );
    const rss = r.rssPeakKb;
    const rssBefore = r.rssPeakKbBefore;
    if (rss != null && rssBefore != null && rss > rssBefore * RSS_LIMIT)
      failures.push(
        `${where}: RSS peak ${fmtMb(rss)} MB vs ${fmtMb(rssBefore)} (${percent(rss / rssBefore)}, limit +10%)`,
      );
  }
  return failures;
}

const percent = (ratio: number): string => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;
