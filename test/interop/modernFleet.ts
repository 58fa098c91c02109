/**
 * The fleet of the Sidekiq 7.3 and 8.0 interop tests (modernSidekiq.ts), set up once per file on a
 * private Redis: a Ruby Sidekiq server (test/ruby/modern_server.rb, queues `ruby` and `fleet`) and a
 * tsq worker process (`sidekiq_version` left at its default, auto; queues `tsq`, `fleet`, `default`;
 * 1 s heartbeats), then this work, pushed by each side's own client, all run before the first test:
 *
 *   Ruby client → tsq     PayloadJob ×5 (push, perform_in 1 s, push_bulk ×3); FarRetryFailJob ×1 (fails,
 *                         retried in a day); one PayloadJob to `parked`, which nobody works
 *   tsq client → Ruby     InteropJob ×2 (push, performIn 1 s) in the fleet's format; on 8.0 one more from
 *                         a client set to 7 (float seconds); one to `parked-tsq`, which nobody works
 *   both → both           FleetJob ×100 on `fleet` (50 pushed by each client), worked by both processes
 *   7.3 only              ActiveJob RecordJob both ways: perform_later → tsq, performLater → Ruby
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../src/client/Client.js";
import { performLater } from "../../src/features/activejob/performLater.js";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";
import { RETRY } from "../../src/wire/keys.js";
import { startRedisServer, type RedisHandle } from "../helpers/redis.js";
import { rubyJson, type SidekiqRuby } from "../helpers/sidekiqRuby.js";
import { rubyTestFile, startSidekiq, type SidekiqProcess } from "../helpers/sidekiqProcess.js";
import { TEST_JOBS, eventually, startTsq, type TsqProcess } from "../helpers/tsqProcess.js";

export const FLEET_JOBS = 100;

export interface Fleet {
  sidekiq: SidekiqRuby;
  url: string;
  redis: TsqRedis;
  ruby: SidekiqProcess;
  tsq: TsqProcess;
  tsqIdentity: string;
  /** tsq's log line of its `sidekiq_version` decision at start. */
  decision: Record<string, unknown>;
  byRuby: { payload: string[]; fail: string; parked: string; aj: string | null };
  byTsq: { interop: string[]; seconds: string | null; parked: string; aj: string | null };
  /** What each class ran in the whole fleet: runs (failures included) and failures. */
  expected: Map<string, { p: number; f: number }>;
  stop(): Promise<void>;
}

/** ActiveJob through Sidekiq's adapter needs railties ≥ 7.0 from Sidekiq 8.0 on; Debian 12 has 6.1. */
export function activeJobLoads(sidekiq: SidekiqRuby): boolean {
  return sidekiq.line === "7.3";
}

export async function startFleet(sidekiq: SidekiqRuby): Promise<Fleet> {
  const server = await startRedisServer();
  const url = `redis://127.0.0.1:${server.port}/0`;
  const redis = connect(url, { name: "tsq-test" });
  const configDir = mkdtempSync(join(tmpdir(), "tsq-modern-"));
  const children: { stop(): Promise<unknown> }[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await child.stop();
    redis.disconnect();
    await stopServer(server.child);
    rmSync(server.dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  };
  try {
    const aj = activeJobLoads(sidekiq);
    const ruby = await startSidekiq({
      redis: { url, redis } as RedisHandle,
      ruby: sidekiq,
      queues: ["ruby", "fleet"],
      requireFile: rubyTestFile("modern_server.rb"),
      env: aj ? { TSQ_INTEROP_ACTIVEJOB: "1" } : {},
    });
    children.push(ruby);
    const config = join(configDir, "tsq.yml");
    writeFileSync(config, "heartbeat_interval: 1\npoll_interval_average: 1\n");
    const queues = ["tsq", "fleet", "default"].flatMap((q) => ["-q", q]);
    const tsq = startTsq(["-r", TEST_JOBS, "-C", config, ...queues, "-c", "5"], { REDIS_URL: url });
    children.push({ stop: () => tsq.stop(15_000) });
    const started = await tsq.waitForLine((line) => line.msg === "tsq worker started");
    const decision = await tsq.waitForLine((line) => line.sidekiq_version !== undefined);

    const byRuby = await rubyJson<Fleet["byRuby"]>(sidekiq, url, RUBY_PUSHES, {
      requires: aj ? [rubyTestFile("activejob_jobs.rb")] : [],
    });
    const client = new Client({ redis: url });
    const seconds = new Client({ redis: url, sidekiqVersion: 7 });
    let byTsq: Fleet["byTsq"];
    try {
      // A client on its own reads the fleet in the background; a test wants it read before its pushes.
      await client.fleetVersion.read(client.redis);
      const interop = [
        await client.push({ class: "InteropJob", queue: "ruby", args: [1, "two", { three: 3.5 }, [null, true]] }),
        await client.push({ class: "InteropJob", queue: "ruby", args: ["later"], at: Date.now() / 1000 + 1 }),
      ].map(String);
      await client.pushBulk({ class: "FleetJob", queue: "fleet", args: tsqFleetArgs() });
      byTsq = {
        interop,
        seconds:
          sidekiq.line === "8.0" ? await seconds.push({ class: "InteropJob", queue: "ruby", args: ["seconds"] }) : null,
        parked: String(await client.push({ class: "PayloadJob", queue: "parked-tsq", args: ["parked"] })),
        aj: aj ? (await performLater("RecordJob", ["from-tsq"], { queue: "ruby", client })).jid : null,
      };
    } finally {
      await Promise.all([client.close(), seconds.close()]);
    }
    const interopRuns = byTsq.interop.length + (byTsq.seconds ? 1 : 0);
    await eventually(
      async () =>
        (await redis.llen("payloads")) === byRuby.payload.length &&
        (await redis.zcard(RETRY)) === 1 &&
        (await redis.llen("interop:ran")) === interopRuns &&
        Number(await redis.get("fleet:ruby")) + Number(await redis.get("fleet:tsq")) === FLEET_JOBS &&
        (!aj || ((await redis.llen("activejob:ran")) === 1 && (await redis.llen("ran")) === 1)),
      30_000,
      `the fleet's work did not all run; Ruby's log:\n${ruby.output().slice(-3000)}\ntsq's:\n${tsq.output().slice(-3000)}`,
    );
    const expected = new Map([
      ["PayloadJob", { p: byRuby.payload.length, f: 0 }],
      ["FarRetryFailJob", { p: 1, f: 1 }],
      ["InteropJob", { p: interopRuns, f: 0 }],
      ["FleetJob", { p: FLEET_JOBS, f: 0 }],
      ...(aj ? [["RecordJob", { p: 2, f: 0 }] as const] : []),
    ]);
    return {
      sidekiq,
      url,
      redis,
      ruby,
      tsq,
      tsqIdentity: String(started.identity),
      decision,
      byRuby,
      byTsq,
      expected,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function tsqFleetArgs(): [string, number][] {
  return Array.from({ length: FLEET_JOBS / 2 }, (_, i) => ["tsq", i]);
}

const RUBY_PUSHES = `
c = Sidekiq::Client
payload = [
  c.push("class" => "PayloadJob", "queue" => "tsq", "args" => [1, "two", {"three" => 3.5}, [nil, true]]),
  c.push("class" => "PayloadJob", "queue" => "tsq", "args" => ["later"], "at" => Time.now.to_f + 1),
  *c.push_bulk("class" => "PayloadJob", "queue" => "tsq", "args" => [["bulk", 0], ["bulk", 1], ["bulk", 2]])
]
fail_jid = c.push("class" => "FarRetryFailJob", "queue" => "tsq", "args" => [])
parked = c.push("class" => "PayloadJob", "queue" => "parked", "args" => ["parked"])
c.push_bulk("class" => "FleetJob", "queue" => "fleet", "args" => (0...${FLEET_JOBS / 2}).map { |i| ["ruby", i] })
aj = defined?(RecordJob) ? RecordJob.perform_later("from-ruby", count: 3).provider_job_id : nil
{ "payload" => payload, "fail" => fail_jid, "parked" => parked, "aj" => aj }
`;

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
