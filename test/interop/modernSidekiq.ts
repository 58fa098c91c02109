/**
 * Live interop with Ruby Sidekiq 7.3 or 8.0, one file per version (sidekiq-7.3.test.ts,
 * sidekiq-8.0.test.ts) running these tests over the fleet of modernFleet.ts: the work each side pushed
 * for the other, read back through each side's API, admin tools and Web UI; the Metrics of both sides
 * compared class by class. Skipped with a notice where ../shared/ruby is missing; mandatory under CI.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ExecutionMetrics, ProcessSet, Queue, Stats } from "../../src/admin/api/index.js";
import { signalsKey } from "../../src/wire/keys.js";
import { VERSION } from "../../src/wire/version.js";
import { formatsOf } from "../../src/wire/sidekiqVersion.js";
import { Client } from "../../src/client/Client.js";
import { mustHaveSidekiqRuby, rubyJson, skipUnlessSidekiqRuby, type SidekiqLine } from "../helpers/sidekiqRuby.js";
import { tsqctl } from "../helpers/tsqctl.js";
import { eventually } from "../helpers/tsqProcess.js";
import { startWeb } from "../admin/web/webHelpers.js";
import { FLEET_JOBS, activeJobLoads, startFleet, type Fleet } from "./modernFleet.js";
import {
  PAGES,
  RUBY_METRICS_AND_PAGES,
  RUBY_VIEW,
  assertNow,
  escape,
  metricsRows,
  sorted,
  successesAndFailures,
  type InteropRun,
  type PayloadRun,
  type RubyMetrics,
  type RubyView,
} from "./modernViews.js";

export function sidekiqInteropTests(line: SidekiqLine): void {
  const skip = skipUnlessSidekiqRuby(line);
  const major = line === "8.0" ? 8 : 7;
  const formats = formatsOf(major);
  const timestampType = formats.timestamps === "milliseconds" ? "Integer" : "Float";
  // Set by `before` (every test is skipped without it).
  let fleet!: Fleet;
  let view: Promise<RubyView> | undefined;
  const rubyView = () =>
    (view ??= rubyJson<RubyView>(fleet.sidekiq, fleet.url, RUBY_VIEW, {
      env: { TSQ_IDENTITY: fleet.tsqIdentity, TSQ_PARKED: "parked-tsq" },
    }));

  before(async () => {
    if (skip) return;
    fleet = await startFleet(mustHaveSidekiqRuby(line));
  });
  after(async () => {
    await (fleet as Fleet | undefined)?.stop();
  });

  test(
    `sidekiq_version auto reads Sidekiq ${line} in processes: tsq writes ${formats.timestamps} and ${formats.metrics}'s metrics keys, logged at start`,
    { skip },
    async () => {
      const { decision, sidekiq, url } = fleet;
      assert.deepEqual(decision.ruby_sidekiq, { [sidekiq.version]: 1 }, "the Ruby process's version, from its info");
      assert.equal(decision.timestamps, formats.timestamps);
      assert.equal(decision.metrics_layout, formats.metrics);
      assert.match(String(decision.msg), new RegExp(`sidekiq_version auto, Ruby Sidekiq in Redis: ${sidekiq.version}`));
      // A client on its own: its first push writes seconds; a read in the background then follows the fleet.
      const client = new Client({ redis: url });
      try {
        await client.push({ class: "PayloadJob", queue: "unworked", args: [] });
        await eventually(
          async () =>
            client.timestampFormat === formats.timestamps && client.fleetVersion.formats.metrics === formats.metrics,
          10_000,
          "the client never read the fleet",
        );
      } finally {
        await client.close();
      }
    },
  );

  test(
    `Ruby's client → tsq: args, queues, perform_in and push_bulk run in tsq; Ruby's ${timestampType} timestamps read right`,
    { skip },
    async () => {
      const runs = (await fleet.redis.lrange("payloads", 0, -1)).map((text) => JSON.parse(text) as PayloadRun);
      const byJid = new Map(runs.map((run) => [run.jid, run]));
      const [plain, later, ...bulk] = fleet.byRuby.payload.map((jid) => byJid.get(jid));
      assert.deepEqual(plain?.args, [1, "two", { three: 3.5 }, [null, true]]);
      assert.deepEqual(later?.args, ["later"]);
      assert.deepEqual(
        bulk.map((run) => run?.args),
        [
          ["bulk", 0],
          ["bulk", 1],
          ["bulk", 2],
        ],
      );
      for (const run of runs) {
        assert.equal(run.queue, "tsq");
        // Ruby 8 writes integer epoch ms, 7 float seconds; either way it is now, not 1970 or the year 50,000.
        assertNow(run.created_at, formats.timestamps, `created_at of ${run.jid}`);
        // A scheduled job is enqueued by whichever poller comes first, Ruby's or tsq's: both write the fleet's format.
        assertNow(run.enqueued_at, formats.timestamps, `enqueued_at of ${run.jid}`);
      }
      const latency = await new Queue(fleet.redis, "parked").latency();
      assert.ok(latency >= 0 && latency < 120, `tsq reads the latency of Ruby's parked job: ${latency} s`);
    },
  );

  test(
    `tsq's client → Ruby ${line}: args and queue as pushed, ${timestampType} timestamps${line === "8.0" ? " (and Float from a client set to 7)" : ""}, Queue#latency`,
    { skip },
    async () => {
      const ran = (await fleet.redis.lrange("interop:ran", 0, -1)).map((text) => JSON.parse(text) as InteropRun);
      const byJid = new Map(ran.map((run) => [run.jid, run]));
      const [plain, later] = fleet.byTsq.interop.map((jid) => byJid.get(jid));
      assert.deepEqual(plain?.args, [1, "two", { three: 3.5 }, [null, true]]);
      assert.deepEqual(plain?.arg_types, ["Integer", "String", { three: "Float" }, ["NilClass", "TrueClass"]]);
      assert.deepEqual(later?.args, ["later"]);
      for (const run of [plain, later]) {
        assert.ok(run, "every tsq push ran in Ruby");
        assert.equal(run.queue, "ruby");
        assert.equal(run.created_at_class, timestampType, `Ruby reads tsq's created_at as ${timestampType}`);
        assert.equal(run.enqueued_at_class, timestampType);
      }
      if (fleet.byTsq.seconds) assert.equal(byJid.get(fleet.byTsq.seconds)?.created_at_class, "Float");
      const { latency } = await rubyView();
      assert.ok(latency >= 0 && latency < 120, `Ruby's Queue#latency of tsq's parked job: ${latency} s`);
    },
  );

  test(
    `Sidekiq ${line}'s API and sidekiqmon over tsq's process: ProcessSet, RetrySet, then Process#quiet! quiets tsq`,
    { skip },
    async () => {
      const { processes, retries, monitor } = await rubyView();
      const tsq = processes.find((p) => p.identity === fleet.tsqIdentity);
      assert.ok(tsq, `Ruby's ProcessSet lists tsq: ${JSON.stringify(processes)}`);
      assert.deepEqual(tsq.queues, ["tsq", "fleet", "default"]);
      assert.match(tsq.version, /^tsq /);
      assert.equal(tsq.concurrency, 5);
      assert.equal(processes.find((p) => p.identity === fleet.ruby.identity)?.version, fleet.sidekiq.version);
      assert.equal(retries.length, 1);
      const [retry] = retries;
      assert.deepEqual(
        [retry!.jid, retry!.klass, retry!.queue, retry!.error_class, retry!.retry_count],
        [fleet.byRuby.fail, "FarRetryFailJob", "tsq", "Error", 0],
      );
      assert.equal(retry!.failed_at_class, timestampType, "tsq writes failed_at in the fleet's format");
      assertNow(retry!.failed_at, formats.timestamps, "failed_at");
      assert.ok(Math.abs(retry!.at - (Date.now() / 1000 + 86_400)) < 600, "retried in a day (FarRetryFailJob.retryIn)");
      assert.match(monitor, new RegExp(escape(fleet.tsqIdentity)), "sidekiqmon's processes section lists tsq");
      await fleet.tsq.waitForLine((l) => l.msg === "received remote signal" && l.signal === "TSTP", 15_000);
      await eventually(
        async () => (await fleet.redis.hget(fleet.tsqIdentity, "quiet")) === "true",
        15_000,
        "tsq never published quiet",
      );
    },
  );

  test(
    `tsq's API and tsqctl over Sidekiq ${line}'s process: ProcessSet, tsqctl processes, tsqctl quiet reaches Ruby`,
    { skip },
    async () => {
      const { ruby, sidekiq, url, redis } = fleet;
      const record = await new ProcessSet(redis).get(ruby.identity);
      assert.equal(record?.version, sidekiq.version);
      assert.deepEqual(record?.queues, ["ruby", "fleet"]);
      const listed = await tsqctl(["processes", "--json"], { REDIS_URL: url });
      assert.equal(listed.exitCode, 0, listed.stderr);
      const { processes } = JSON.parse(listed.stdout) as { processes: { identity: string; version: string | null }[] };
      assert.deepEqual(
        processes.map((p) => [p.identity, p.version]).sort(),
        [
          [ruby.identity, sidekiq.version],
          [fleet.tsqIdentity, `tsq ${VERSION}`],
        ].sort(),
      );
      const quiet = await tsqctl(["quiet", ruby.identity], { REDIS_URL: url });
      assert.equal(quiet.exitCode, 0, quiet.stderr);
      // Ruby pops its signals at each beat (every 10 s), after the beat's metrics flush.
      await eventually(
        async () => /Received TSTP/.test(ruby.output()),
        25_000,
        `Ruby never quieted:\n${ruby.output().slice(-2000)}`,
      );
      assert.equal(await redis.llen(signalsKey(ruby.identity)), 0);
    },
  );

  test(
    `one picture of the mixed fleet: Sidekiq ${line}'s Metrics (Query, Web UI) and tsq's (API, dashboard, tsqctl metrics) list the same classes and counts`,
    { skip },
    async () => {
      const { redis, url, expected } = fleet;
      const want = Object.fromEntries([...expected].map(([name, c]) => [name, [c.p, c.f]]));
      const tsqTotals = async () => {
        const top = await new ExecutionMetrics(redis).top("1h");
        return Object.fromEntries([...top.classes].map(([name, c]) => [name, [c.p, c.f]]));
      };
      // Ruby flushes at its beats: the one that quieted it (previous test) wrote everything it ran.
      await eventually(
        async () => JSON.stringify(sorted(await tsqTotals())) === JSON.stringify(sorted(want)),
        15_000,
        `tsq reads ${JSON.stringify(await tsqTotals())}, the fleet ran ${JSON.stringify(want)}`,
      );
      const theirs = await rubyMetrics();
      assert.deepEqual(sorted(theirs.query), sorted(want), "Sidekiq's Metrics::Query#top_jobs");
      const web = await startWeb({ redis });
      try {
        const page = await (await fetch(`${web.url}/metrics`)).text();
        const dashboard = metricsRows(page.slice(page.lastIndexOf("<table", page.indexOf('id="metrics-table"'))));
        assert.deepEqual(sorted(dashboard), sorted(successesAndFailures(want)), "tsq's dashboard /metrics");
      } finally {
        await web.stop();
      }
      assert.deepEqual(
        sorted(metricsRows(theirs.pages["/metrics"]!.body)),
        sorted(successesAndFailures(want)),
        "Sidekiq's Web UI /metrics",
      );
      const cli = await tsqctl(["metrics", "--json"], { REDIS_URL: url });
      const rows = JSON.parse(cli.stdout) as { class: string; processed: number; failed: number }[];
      assert.deepEqual(
        sorted(Object.fromEntries(rows.map((r) => [r.class, [r.processed, r.failed]]))),
        sorted(want),
        "tsqctl metrics",
      );
      // The histograms, both layouts: every successful FleetJob run is in one bucket on either side.
      const forClass = await new ExecutionMetrics(redis).forClass("FleetJob", "1h");
      const tsqHist = forClass.classes
        .get("FleetJob")!
        .histograms!.flat()
        .reduce((a, b) => a + b, 0);
      assert.deepEqual(
        [tsqHist, theirs.fleetHistogram],
        [FLEET_JOBS, FLEET_JOBS],
        "histogram counts (tsq, Sidekiq for_job)",
      );
      assert.deepEqual(
        theirs.stats,
        (({ processed, failed }) => ({ processed, failed }))(await new Stats(redis).fetch()),
      );
      const ms = Object.fromEntries(
        [...(await new ExecutionMetrics(redis).top("1h")).classes].map(([n, c]) => [n, c.ms]),
      );
      assert.deepEqual(sorted(theirs.ms), sorted(ms), "the same milliseconds per class");
      const summary = Object.entries(sorted(want))
        .map(([name, [p, f]]) => `${name} ${p} runs/${f} failed`)
        .join(", ");
      const split = `FleetJob: Ruby ran ${await redis.get("fleet:ruby")}, tsq ${await redis.get("fleet:tsq")}`;
      process.stdout.write(`# Sidekiq ${fleet.sidekiq.version} + tsq, both Metrics: ${summary} (${split})\n`);
    },
  );

  test(`Sidekiq ${line}'s Web UI renders ${PAGES.length} pages with tsq in the fleet`, { skip }, async () => {
    const { pages } = await rubyMetrics();
    for (const path of PAGES) assert.equal(pages[path]?.status, 200, `${path}: ${pages[path]?.body.slice(0, 300)}`);
    assert.match(pages["/busy"]!.body, new RegExp(escape(fleet.tsqIdentity)), "/busy lists tsq");
    assert.match(pages["/retries"]!.body, /FarRetryFailJob/);
    assert.match(pages["/queues"]!.body, /parked-tsq/);
    assert.match(pages["/metrics/FleetJob"]!.body, /FleetJob/);
  });

  const ajSkip =
    skip || (line === "8.0" ? "Sidekiq 8.0's Rails integration needs railties >= 7.0; Debian 12 has 6.1" : false);
  test(
    `ActiveJob through Sidekiq ${line}'s adapter: perform_later runs in tsq, performLater runs in Ruby`,
    { skip: ajSkip },
    async () => {
      assert.ok(activeJobLoads(fleet.sidekiq));
      const [tsqRun] = (await fleet.redis.lrange("ran", 0, -1)).map(
        (t) => JSON.parse(t) as { jid: string; args: unknown[] },
      );
      assert.deepEqual([tsqRun?.jid, tsqRun?.args], [fleet.byRuby.aj, ["from-ruby", { count: 3 }]]);
      const [rubyRun] = (await fleet.redis.lrange("activejob:ran", 0, -1)).map(
        (t) => JSON.parse(t) as { provider_job_id: string; args: unknown },
      );
      assert.deepEqual(
        [rubyRun?.provider_job_id, rubyRun?.args],
        [fleet.byTsq.aj, ["Array", [["String", "from-tsq"]]]],
      );
    },
  );

  let metrics: Promise<RubyMetrics> | undefined;
  const rubyMetrics = () =>
    (metrics ??= rubyJson<RubyMetrics>(fleet.sidekiq, fleet.url, RUBY_METRICS_AND_PAGES, {
      env: { TSQ_PAGES: PAGES.join(" ") },
      requires: ["sidekiq/web", "sidekiq/monitor", "rack", "rack/session/cookie", "rack/mock"],
    }));
}
