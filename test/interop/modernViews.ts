/**
 * What Ruby Sidekiq 7.3 or 8.0 sees of the mixed fleet (modernFleet.ts), each read in one Ruby run
 * (a Ruby start is about a second of CPU), a reader of the Metrics tables both dashboards render, and
 * the shapes and checks the tests of modernSidekiq.ts share.
 */
import assert from "node:assert/strict";

/** Ruby's API and sidekiqmon over the fleet; then `Process#quiet!` of the tsq process (ENV TSQ_IDENTITY). */
export const RUBY_VIEW = `
require "sidekiq/monitor"
require "stringio"
processes = Sidekiq::ProcessSet.new.map do |p|
  { "identity" => p.identity, "version" => p["version"], "queues" => p["queues"], "concurrency" => p["concurrency"] }
end
retries = Sidekiq::RetrySet.new.map do |e|
  { "jid" => e.jid, "klass" => e.klass, "queue" => e.queue, "error_class" => e["error_class"],
    "retry_count" => e["retry_count"], "failed_at" => e["failed_at"], "failed_at_class" => e["failed_at"].class.name,
    "at" => e.at.to_f }
end
out = StringIO.new
saved, $stdout = $stdout, out
begin
  Sidekiq::Monitor::Status.new.display("processes")
ensure
  $stdout = saved
end
latency = Sidekiq::Queue.new(ENV.fetch("TSQ_PARKED")).latency
Sidekiq::ProcessSet.new.find { |p| p.identity == ENV.fetch("TSQ_IDENTITY") }.quiet!
{ "processes" => processes, "retries" => retries, "monitor" => out.string, "latency" => latency }
`;

export interface RubyView {
  processes: { identity: string; version: string; queues: string[]; concurrency: number }[];
  retries: {
    jid: string;
    klass: string;
    queue: string;
    error_class: string;
    retry_count: number;
    failed_at: number;
    failed_at_class: string;
    at: number;
  }[];
  /** sidekiqmon's `processes` section. */
  monitor: string;
  /** `Sidekiq::Queue#latency` of the queue tsq pushed a job to that nobody works, seconds. */
  latency: number;
}

/** Sidekiq Web's pages rendered with tsq in the fleet (Rack::MockRequest behind a session, as its tests). */
export const PAGES =
  "/ /busy /queues /queues/parked-tsq /retries /scheduled /morgue /metrics /metrics/FleetJob /stats /stats/queues".split(
    " ",
  );

/**
 * Sidekiq's Metrics (`Metrics::Query#top_jobs` and `#for_job`), `Stats`, and its Web UI's pages (ENV
 * TSQ_PAGES, space-separated paths) rendered through Rack::MockRequest behind a cookie session.
 */
export const RUBY_METRICS_AND_PAGES = `
require "sidekiq/metrics/query"
q = Sidekiq::Metrics::Query.new
top = q.top_jobs(minutes: 60)
query = top.job_results.to_h { |k, jr| [k, [jr.totals["p"], jr.totals["f"]]] }
ms = top.job_results.to_h { |k, jr| [k, jr.totals["ms"]] }
histogram = q.for_job("FleetJob", minutes: 60).job_results["FleetJob"].hist.values.flatten.sum
stats = Sidekiq::Stats.new
app = Rack::Builder.new do
  use Rack::Session::Cookie, secret: "x" * 64, same_site: true, max_age: 86400
  run Sidekiq::Web
end
pages = ENV.fetch("TSQ_PAGES").split.to_h do |path|
  response = Rack::MockRequest.new(app).get(path)
  [path, { "status" => response.status, "body" => response.body }]
end
{ "query" => query, "ms" => ms, "fleetHistogram" => histogram,
  "stats" => { "processed" => stats.processed, "failed" => stats.failed }, "pages" => pages }
`;

export interface RubyMetrics {
  /** class -> [runs, failures] over the last hour. */
  query: Record<string, number[]>;
  /** class -> milliseconds of its successful runs over the last hour. */
  ms: Record<string, number>;
  /** FleetJob's histogram counters of the last hour, summed. */
  fleetHistogram: number;
  stats: { processed: number; failed: number };
  pages: Record<string, { status: number; body: string }>;
}

/**
 * The first table of `html` as class -> [successes, failures]: the rows of Sidekiq's Metrics page and
 * of tsq's (name, success, failure, total time, average), whatever markup surrounds the cells.
 */
export function metricsRows(html: string): Record<string, number[]> {
  const start = html.indexOf("<table");
  const table = html.slice(start, html.indexOf("</table>", start));
  const rows: Record<string, number[]> = {};
  for (const [, row] of table.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)) {
    const cells = [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim(),
    );
    if (cells.length < 3) continue;
    rows[cells[0]!] = [Number(cells[1]!.replaceAll(",", "")), Number(cells[2]!.replaceAll(",", ""))];
  }
  return rows;
}

export interface PayloadRun {
  jid: string;
  queue: string;
  args: unknown[];
  created_at: number;
  enqueued_at: number;
}

export interface InteropRun {
  jid: string;
  queue: string;
  args: unknown[];
  arg_types: unknown[];
  created_at_class: string;
  enqueued_at_class: string;
}

/** `value` is a timestamp of the last 10 minutes in `format`: integer epoch ms, or epoch seconds. */
export function assertNow(value: number, format: "seconds" | "milliseconds", what: string): void {
  const now = format === "milliseconds" ? Date.now() : Date.now() / 1000;
  const span = format === "milliseconds" ? 600_000 : 600;
  assert.ok(typeof value === "number" && Math.abs(now - value) < span, `${what}: ${value} is not now in ${format}`);
  if (format === "milliseconds") assert.ok(Number.isInteger(value), `${what}: ${value} is not an integer`);
}

export function successesAndFailures(want: Record<string, number[]>): Record<string, number[]> {
  return Object.fromEntries(Object.entries(want).map(([name, [p, f]]) => [name, [p! - f!, f!]]));
}

export function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
