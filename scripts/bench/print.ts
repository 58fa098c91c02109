// The printed bench report: the per-run table, the medians, the ratios to peers and the targets judged.

import { fmtInt, fmtMb, table, type Cell } from "./lib.js";

import { fixed, ratio, type Latency, type Report, type Run } from "./report.js";

export const perChild = (
  values: readonly (number | null)[] | undefined,
  format: (value: number | null) => string,
): string => (values?.length ? values.map((value) => format(value)).join("/") : "n/a");

export function runRows(runs: readonly Run[], rounds: number): Cell[][] {
  return runs.map((r) => [
    r.label + (rounds > 1 ? ` #${r.round}` : ""),
    r.processes,
    r.concurrency,
    fmtInt(r.jobsPerSecond),
    r.seconds?.toFixed(2) ?? "n/a",
    fmtInt(r.push?.jobsPerSecond),
    perChild(r.rssKb?.perChildPeak, fmtMb),
    perChild(r.rssKb?.perChildFirstTenthPeak, fmtMb) + " → " + perChild(r.rssKb?.perChildLastTenthPeak, fmtMb),
    (r.workerCpuSeconds?.toFixed(1) ?? "n/a") +
      (r.supervisorCpuSeconds !== null && r.supervisorCpuSeconds !== undefined
        ? ` (sup. ${r.supervisorCpuSeconds.toFixed(1)})`
        : ""),
    r.redisCpuSeconds?.toFixed(1) ?? "n/a",
    r.redisCpuMicrosPerJob?.toFixed(0) ?? "n/a",
    `${fmtInt(r.processed)}${r.requeuedAtStop ? ` + ${fmtInt(r.requeuedAtStop)} requeued` : ""}${r.allAccountedFor ? " ✓" : " ✗"}`,
  ]);
}

export const RUN_HEADER = [
  "system",
  "P",
  "C",
  "jobs/s",
  "wall s",
  "push jobs/s",
  "RSS peak MB",
  "RSS first→last 10% MB",
  "worker CPU s",
  "Redis CPU s",
  "Redis µs/job",
  "processed",
];

/** The issue's targets that this report can judge (issue 7, "Targets"). */
export function targets(report: Report): string[] {
  const out: string[] = [];
  const tsqRuns = report.summary.filter((r) => r.system === "tsq");
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  for (const r of report.ratios) {
    if (r.processes !== 1 || r.concurrency !== 50 || r.ratio === null) continue;
    const goal = r.peer === "BullMQ" ? 2 : 4;
    out.push(`tsq/${r.peer} at P=1 C=50 ≥ ${goal}×: ${r.ratio.toFixed(2)}× (${verdict(r.ratio >= goal)})`);
  }
  for (const r of report.changeRatios ?? []) {
    if (r.ratio === null) continue;
    // Within 5% either way is this machine's noise between interleaved rounds.
    out.push(
      `tsq / tsq before, ${r.fetch} fetch, P=${r.processes} C=${r.concurrency}, within ±5%: ${r.ratio.toFixed(3)}× ` +
        `(worker CPU ${fixed(r.workerCpuMicrosPerJob, 1)} vs ${fixed(r.workerCpuMicrosPerJobBefore, 1)} µs/job` +
        (r.rssPeakKbBefore == null ? "" : `, RSS peak ${fmtMb(r.rssPeakKb)} vs ${fmtMb(r.rssPeakKbBefore)} MB`) +
        `; ${verdict(r.ratio >= 0.95)})`,
    );
  }
  if (report.guardFailures)
    out.push(
      report.guardFailures.length
        ? `guard (worker CPU/job ≤ +5%, RSS peak ≤ +10% vs the build compared, medians of every round): FAILED: ${report.guardFailures.join("; ")}`
        : "guard (worker CPU/job ≤ +5%, RSS peak ≤ +10% vs the build compared, medians of every round): passed",
    );
  for (const r of report.fetchRatios ?? []) {
    if (r.ratio === null) continue;
    out.push(
      `reliable / basic fetch at P=${r.processes} C=${r.concurrency} ≥ 0.85×: ${r.ratio.toFixed(2)}× (${verdict(r.ratio >= 0.85)})`,
    );
  }
  for (const r of tsqRuns.filter((run) => run.processes === 2)) {
    const one = tsqRuns.find((run) => run.processes === 1 && run.concurrency === r.concurrency);
    // (A comparison reads a null as 0.)
    const perSecond = r.jobsPerSecond ?? 0;
    out.push(
      `tsq P=2 C=${r.concurrency} ≥ 80,000 jobs/s: ${fmtInt(r.jobsPerSecond)} (${verdict(perSecond >= 80_000)})` +
        (one ? `; more than P=1: ${fmtInt(one.jobsPerSecond)} (${verdict(perSecond > (one.jobsPerSecond ?? 0))})` : ""),
    );
  }
  for (const { processes, concurrency, latency } of tsqRuns) {
    if (!latency) continue;
    const { p50Ms, p99Ms } = latency;
    out.push(
      `tsq P=${processes} C=${concurrency} latency p50 < 1 ms: ${fixed(p50Ms, 2)} ms (${verdict(p50Ms !== null && p50Ms < 1)}); p99 < 5 ms: ${fixed(p99Ms, 2)} ms (${verdict(p99Ms !== null && p99Ms < 5)})`,
    );
  }
  for (const r of report.runs.filter((run) => run.system === "tsq" && run.jobs >= 1_000_000)) {
    // The target's own reading: a child's RSS when 10% of the jobs were done against at the end.
    const growth = (from: number | null | undefined, to: number | null | undefined) =>
      from && to ? (to - from) / from : Infinity;
    const pointGrowth = Math.max(...r.rssKb.perChildAt10Percent.map((at10, i) => growth(at10, r.rssKb.perChildEnd[i])));
    // Peaks of windows, which the V8 heap's saw-tooth cannot hide: first tenth → last, and second → last
    // (the heap reaches its working size during the first tenth; from the second on, growth is a leak).
    const worst = Math.max(...r.rssKb.growthFirstToLastTenth.map((g) => g ?? Infinity));
    const later = Math.max(...(r.rssKb.perChildPeakByTenth ?? []).map((tenths) => growth(tenths[1], tenths[9])));
    const signed = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}%`;
    const perChild = r.processes > 1 ? ` (${fmtInt(r.jobs / r.processes)} per child)` : "";
    out.push(
      `tsq P=${r.processes} C=${r.concurrency} child RSS after ${fmtInt(r.jobs)} jobs${perChild} within 10% of after the first ${fmtInt(r.jobs / 10)}: ` +
        `${signed(pointGrowth)} (${verdict(pointGrowth <= 0.1)}); peak per tenth, first → last ${signed(worst)}, second → last ${signed(later)}`,
    );
  }
  return out;
}

export function printReport(report: Report): void {
  const { machine, options } = report;
  const md = options.markdown;
  const say = (line = "") => console.log(line);
  const bullet = (line: string) => say(md ? `- ${line}` : `  ${line}`);
  const peers = Object.values(report.peers)
    .map((p) => (p.available ? `${p.label} ${p.version}${p.ruby ? ` (Ruby ${p.ruby})` : ""}` : `${p.label}: skipped`))
    .join(" · ");
  say(
    `tsq ${machine.tsq} · Node ${machine.node} · Redis ${machine.redis} (${machine.redisWhere}) · ${machine.cpus} CPUs (${machine.cpuModel}), ` +
      `load ${machine.loadAverage1m} before${machine.loadAverage1mAfter == null ? "" : `, ${machine.loadAverage1mAfter} after`}, Redis PING ${machine.redisPingMicrosP50} µs${machine.warmCpus ? ", CPUs kept warm (--warm-cpus)" : ""}` +
      `${peers ? ` · ${peers}` : ""}${md ? "  " : ""}`,
  );
  say(
    `${fmtInt(options.jobs)} no-op jobs per run, pushed before the clock; clock = release → queue empty; tsq fetch ${options.fetch}; ` +
      `tsq workers log at ${options.workerLogLevel} (TSQ_LOG_LEVEL), Sidekiq's logger at WARN` +
      (options.nodeArgs?.length ? `; this checkout's node options: ${options.nodeArgs.join(" ")}` : ""),
  );
  for (const p of Object.values(report.peers)) if (!p.available) bullet(`skipped ${p.label}: ${p.reason}`);
  say();

  const runs = report.runs;
  const rounds = options.repeat;
  say(table(RUN_HEADER, runRows(runs, rounds)));
  say();
  say(
    "RSS: per worker process, a/b/… with several; first→last 10%: peak while the first tenth of the jobs was taken → peak over the last tenth.",
  );
  say(
    "CPU: user+sys seconds during the drain; worker CPU counts every process of the system, tsq-cluster's supervisor included (sup.).",
  );
  say(
    'processed: the system\'s own count after a graceful stop (✓ = every job pushed, latency jobs included; "requeued" = popped but not started when the stop came, pushed back by the worker).',
  );

  for (const r of runs.filter((run) => run.jobs >= 1_000_000)) {
    const curves = (r.rssKb.perChildPeakByTenth ?? []).map((tenths) => tenths.map(fmtMb).join(" "));
    say();
    say(
      `${r.label} P=${r.processes} C=${r.concurrency}: RSS peak per tenth of the ${fmtInt(r.jobs)} jobs, MB (per child): ${curves.join(" | ")}`,
    );
  }

  const withLatency = runs.filter((r): r is Run & { latency: Latency } => Boolean(r.latency));
  const [firstWithLatency] = withLatency;
  if (firstWithLatency) {
    say();
    say(`enqueue→start latency on idle workers, ${fmtInt(firstWithLatency.latency.jobs)} jobs pushed one at a time:`);
    say();
    say(
      table(
        ["system", "P", "C", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"],
        withLatency.map((r) => {
          const { p50Ms, p90Ms, p99Ms, maxMs, meanMs } = r.latency;
          const label = r.label + (rounds > 1 ? ` #${r.round}` : "");
          return [label, r.processes, r.concurrency, ...[p50Ms, p90Ms, p99Ms, maxMs, meanMs].map((ms) => fixed(ms, 2))];
        }),
      ),
    );
  }

  if (rounds > 1) {
    say();
    const leftOut = report.summary.reduce((n, r) => n + r.busyRoundsLeftOut, 0);
    say(
      `median of ${rounds} rounds (the systems took turns)${leftOut ? `; ${leftOut} round(s) on a busy machine (see the warnings) left out` : ""}:`,
    );
    say();
    say(
      table(
        [
          "system",
          "P",
          "C",
          "jobs/s",
          "min–max",
          "wall s",
          "worker µs/job",
          "Redis µs/job",
          "RSS peak MB",
          ...(report.summary.some((r) => r.latency) ? ["latency p50/p99 ms"] : []),
        ],
        report.summary.map((r) => [
          r.label,
          r.processes,
          r.concurrency,
          fmtInt(r.jobsPerSecond),
          `${fmtInt(r.minJobsPerSecond)}–${fmtInt(r.maxJobsPerSecond)}`,
          fixed(r.seconds, 2),
          r.workerCpuMicrosPerJob?.toFixed(0) ?? "n/a",
          r.redisCpuMicrosPerJob?.toFixed(0) ?? "n/a",
          fmtMb(r.rssPeakKb),
          ...(r.latency ? [`${fixed(r.latency.p50Ms, 2)}/${fixed(r.latency.p99Ms, 2)}`] : []),
        ]),
      ),
    );
  }

  if (report.sweep) {
    const systems = [...new Set(runs.map((r) => r.label))];
    const header = [
      "P",
      "C",
      ...systems.map((s) => `${s} jobs/s`),
      ...systems.filter((s) => s !== "tsq").map((s) => `tsq/${s}`),
    ];
    const rows = report.sweep.map(({ processes, concurrency }) => {
      const find = (label: string) =>
        report.summary.find((r) => r.label === label && r.processes === processes && r.concurrency === concurrency);
      const tsq = find("tsq");
      return [
        processes,
        concurrency,
        ...systems.map((s) => fmtInt(find(s)?.jobsPerSecond)),
        ...systems
          .filter((s) => s !== "tsq")
          .map((s) => `${ratio(tsq?.jobsPerSecond, find(s)?.jobsPerSecond)?.toFixed(2) ?? "n/a"}×`),
      ];
    });
    say();
    say(`sweep (jobs/s${rounds > 1 ? `, median of ${rounds}` : ""}):`);
    say();
    say(table(header, rows));
  } else if (report.ratios.length) {
    say();
    for (const r of report.ratios) {
      bullet(
        `tsq / ${r.peer} at P=${r.processes} C=${r.concurrency}: ${r.ratio?.toFixed(2) ?? "n/a"}×${rounds > 1 ? " (medians)" : ""}`,
      );
    }
  }

  const goals = targets(report);
  if (goals.length) {
    say();
    say("targets (issue 7):");
    if (md) say();
    for (const line of goals) bullet(line);
  }

  if (report.discardedBusyRuns?.length) {
    say();
    say(
      `${report.discardedBusyRuns.length} run(s) on a busy machine were redone (--retry-busy); not shown above: ` +
        report.discardedBusyRuns
          .map((r) => `${r.label} P=${r.processes} C=${r.concurrency} ${fmtInt(r.jobsPerSecond)} jobs/s`)
          .join(", "),
    );
  }

  for (const r of runs) {
    const where = `${r.label} P=${r.processes} C=${r.concurrency}${rounds > 1 ? ` #${r.round}` : ""}`;
    if (r.warning) say(`\nWARNING: ${r.warning}`);
    if (r.busyWarning) say(`\nWARNING: ${where}: ${r.busyWarning}`);
    if (r.stopError) say(`\nWARNING: ${where} did not stop cleanly: ${r.stopError}`);
    if (r.workerOutputLines > 0)
      say(
        `\nnote: ${where} printed ${r.workerOutputLines} line(s), last:\n  ${(r.workerOutputTail ?? []).join("\n  ")}`,
      );
  }
}
