/**
 * `tsqctl metrics [--period 1h] [--class <name>] [--filter <text>] [--json]`: the per-class execution
 * metrics Sidekiq's Metrics tab shows (runs, failures, total and average time of the successful runs),
 * read from Sidekiq 7's and 8's keys alike (tsq/api ExecutionMetrics), so Ruby's and tsq's jobs are in
 * one list whichever version ran them. Busiest class (total time) first, as Sidekiq's tab.
 */
import type { Command } from "commander";
import { ExecutionMetrics, METRICS_PERIODS, averageSeconds, isMetricsPeriod } from "../api/index.js";
import {
  addJsonOption,
  addRedisUrlOption,
  printJson,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { table } from "./format.js";

interface Flags {
  period: string;
  class?: string;
  filter?: string;
  json?: boolean;
  redisUrl?: string;
}

/** One class's line of the listing (also the `--json` shape). */
interface MetricsRow {
  class: string;
  /** Runs, failures included. */
  processed: number;
  failed: number;
  /** Seconds of the successful runs, summed. */
  seconds: number;
  /** Seconds a successful run took on average (0 without one). */
  average_seconds: number;
}

const PERIODS = Object.keys(METRICS_PERIODS).join(", ");

export function registerMetrics(program: Command, io: CliIO): void {
  const command = program
    .command("metrics")
    .description("per-class runs, failures and times over a period (Sidekiq's Metrics tab; Ruby's and tsq's jobs)")
    .option("--period <period>", `how far back: ${PERIODS}`, "1h")
    .option("--class <name>", "only this class (exact name)")
    .option("--filter <text>", "only classes whose name contains this text (any case)");
  addRedisUrlOption(addJsonOption(command)).action(async (flags: Flags) => {
    const period = flags.period;
    if (!isMetricsPeriod(period)) throw new UsageError(`--period must be one of ${PERIODS}, got "${period}"`);
    const result = await withRedis(resolveRedisUrl(flags.redisUrl, io), (redis) => {
      const metrics = new ExecutionMetrics(redis);
      return flags.class === undefined
        ? metrics.top(period, flags.filter ?? "")
        : metrics.forClass(flags.class, period);
    });
    const rows: MetricsRow[] = [...result.classes]
      .filter(([, c]) => c.p > 0)
      .map(([name, c]) => ({
        class: name,
        processed: c.p,
        failed: c.f,
        seconds: c.ms / 1000,
        average_seconds: averageSeconds(c),
      }))
      .sort((a, b) => b.seconds - a.seconds || b.processed - a.processed || a.class.localeCompare(b.class));
    if (flags.json) return printJson(io, rows);
    if (rows.length === 0) return io.out(`no job ran in the last ${period}\n`);
    const lines = table(
      ["CLASS", "PROCESSED", "FAILED", "SECONDS", "AVG MS"],
      rows.map((row) => [
        row.class,
        String(row.processed),
        String(row.failed),
        row.seconds.toFixed(2),
        (row.average_seconds * 1000).toFixed(1),
      ]),
      new Set([1, 2, 3, 4]),
    );
    io.out(`${lines.join("\n")}\n`);
  });
}
