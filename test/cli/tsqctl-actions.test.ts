/**
 * tsqctl's actions and text listings, run as a real process without a terminal: what each does to
 * Redis, that destructive ones refuse to act without --yes (exit 2, nothing changed), and the exit
 * codes for bad input (2), missing jobs or processes (1) and an unreachable Redis (1, quickly).
 * Confirmation on a terminal is tested under tmux in tsqctl-top.test.ts.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../helpers/tsqctl.js";
import { withinDeadline } from "../helpers/timing.js";
import { Client } from "../../src/client/Client.js";
import { DEAD, PROCESSES, QUEUES, RETRY, SCHEDULE, queueKey, signalsKey } from "../../src/wire/keys.js";
import type { JobPayload } from "../../src/wire/payload.js";
import { freePort, useRedis } from "../helpers/redis.js";

const redis = useRedis();

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

async function tsqctl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  if (!redis.url) throw new Error("the private Redis is not running; refusing to run tsqctl against a default Redis");
  return runTsqctl(args, { REDIS_URL: redis.url, ...env }, { stripFinalNewline: false });
}

async function ok(args: string[]): Promise<string> {
  const run = await tsqctl(args);
  assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

async function fails(args: string[], code: number, stderr: RegExp): Promise<void> {
  const run = await tsqctl(args);
  assert.equal(run.exitCode, code, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  assert.equal(run.stdout, "");
  assert.match(run.stderr, stderr);
}

function entry(jid: string, extra = ""): string {
  return `{"retry":true,"queue":"default","class":"HardJob","args":["${jid}"],"jid":"${jid}","created_at":1795264707.5,"error_class":"RuntimeError","error_message":"boom","failed_at":1795264710.5,"retry_count":3${extra}}`;
}

/** r1, r2 in retry; d1 in dead; s1 in schedule; two jobs in `default`, one in a queue named `retry`. */
async function seed(): Promise<void> {
  const r = redis.redis;
  await r.zadd(RETRY, "1800000000", entry("r1"), "1800000001", entry("r2"));
  await r.zadd(DEAD, "1795264800", entry("d1"));
  await r.zadd(SCHEDULE, "1900000000", entry("s1"));
  await r.sadd(QUEUES, "default", "retry");
  await r.lpush(queueKey("default"), entry("q1"), entry("q2"));
  await r.lpush(queueKey("retry"), entry("qr"));
}

const jidsOf = async (key: string) =>
  (await redis.redis.zrange(key, 0, -1)).map((v) => (JSON.parse(v) as JobPayload).jid);
const queued = async (queue: string) =>
  (await redis.redis.lrange(queueKey(queue), 0, -1)).map((v) => JSON.parse(v) as JobPayload);

describe("retry and kill", () => {
  test("retry <jid> looks in retry, then dead; --set scheduled enqueues a scheduled job now", async () => {
    await seed();
    assert.equal(await ok(["retry", "r2"]), "retried r2 (HardJob) from the retry set\n");
    assert.equal(await ok(["retry", "d1"]), "retried d1 (HardJob) from the dead set\n");
    assert.equal(await ok(["retry", "s1", "--set", "scheduled"]), "retried s1 (HardJob) from the scheduled set\n");
    assert.deepEqual(
      (await queued("default")).slice(0, 3).map((j) => [j.jid, j.retry_count]),
      [
        ["s1", 3],
        ["d1", 2],
        ["r2", 2],
      ],
    );
    assert.deepEqual([await jidsOf(RETRY), await jidsOf(DEAD), await jidsOf(SCHEDULE)], [["r1"], [], []]);
    await fails(["retry", "nope"], 1, /^tsqctl retry: no job with jid nope in the retry set or the dead set\n$/);
    await fails(["retry", "r1", "--set", "dead"], 1, /no job with jid r1 in the dead set/);
  });

  test("kill <jid> looks in retry, then scheduled; the dead entry is the same text", async () => {
    await seed();
    assert.equal(await ok(["kill", "r1"]), "killed r1 (HardJob) from the retry set\n");
    assert.equal(await ok(["kill", "s1"]), "killed s1 (HardJob) from the scheduled set\n");
    assert.deepEqual((await jidsOf(DEAD)).sort(), ["d1", "r1", "s1"]);
    assert.ok((await redis.redis.zrange(DEAD, 0, -1)).includes(entry("r1")));
    await fails(["kill", "d1"], 1, /no job with jid d1 in the retry set or the scheduled set/);
  });

  test("--all needs --yes without a terminal; then it acts on the whole set", async () => {
    await seed();
    await fails(
      ["kill", "--all"],
      2,
      /^tsqctl kill: kill --all needs confirmation and stdin is not a terminal; pass --yes to go ahead\n/,
    );
    await fails(["retry", "--all", "--set", "dead"], 2, /retry --all needs confirmation/);
    assert.deepEqual([await jidsOf(RETRY), await jidsOf(DEAD)], [["r1", "r2"], ["d1"]]);
    assert.equal(await ok(["kill", "--all", "--yes"]), "killed 2 jobs from the retry set\n");
    assert.equal(await ok(["retry", "--all", "--set", "dead", "-y"]), "retried 3 jobs from the dead set\n");
    assert.deepEqual(
      [await redis.redis.zcard(RETRY), await redis.redis.zcard(DEAD), await redis.redis.llen(queueKey("default"))],
      [0, 0, 5],
    );
    assert.equal(await ok(["retry", "--all", "--yes"]), "retried 0 jobs from the retry set\n");
  });

  test("bad combinations exit 2 before touching Redis", async () => {
    await seed();
    await fails(["retry"], 2, /give the jid of a job, or --all for every entry/);
    await fails(["kill", "r1", "--all", "--yes"], 2, /give a jid or --all, not both/);
    await fails(["kill", "r1", "--set", "dead"], 2, /unknown set 'dead'; expected one of: retry, scheduled/);
    await fails(
      ["retry", "--all", "--set", "scheduled", "--yes"],
      2,
      /unknown set 'scheduled'; expected one of: retry, dead/,
    );
    await fails(["retry", ""], 2, /the jid must not be empty/);
    assert.deepEqual(await jidsOf(RETRY), ["r1", "r2"]);
  });
});

describe("delete and clear", () => {
  test("delete needs --yes; it removes one job from a set or a queue (queue:<name> for a queue named like a set)", async () => {
    await seed();
    await fails(["delete", "retry", "r1"], 2, /delete needs confirmation/);
    assert.equal(await ok(["delete", "retry", "r1", "--yes"]), "deleted r1 from the retry set\n");
    assert.equal(await ok(["delete", "scheduled", "s1", "--yes"]), "deleted s1 from the scheduled set\n");
    assert.equal(await ok(["delete", "default", "q1", "--yes"]), "deleted q1 from the queue default\n");
    assert.equal(await ok(["delete", "queue:retry", "qr", "--yes"]), "deleted qr from the queue retry\n");
    assert.deepEqual(
      [
        await jidsOf(RETRY),
        await jidsOf(SCHEDULE),
        (await queued("default")).map((j) => j.jid),
        await redis.redis.llen(queueKey("retry")),
      ],
      [["r2"], [], ["q2"], 0],
    );
    await fails(["delete", "dead", "r2", "--yes"], 1, /no job with jid r2 in the dead set/);
    await fails(["delete", "queue:", "x", "--yes"], 2, /queue: needs a queue name/);
  });

  test("clear needs --yes; it empties a set, or removes a queue and its name", async () => {
    await seed();
    await fails(
      ["clear", "retry"],
      2,
      /^tsqctl clear: clear retry needs confirmation and stdin is not a terminal; pass --yes/,
    );
    assert.equal(await redis.redis.zcard(RETRY), 2);
    assert.equal(await ok(["clear", "retry", "--yes"]), "cleared the retry set (2 jobs)\n");
    assert.equal(await ok(["clear", "dead", "--yes"]), "cleared the dead set (1 job)\n");
    assert.equal(await ok(["clear", "schedule", "--yes"]), "cleared the scheduled set (1 job)\n");
    assert.equal(await ok(["clear", "default", "--yes"]), "cleared the queue default (2 jobs)\n");
    assert.deepEqual(await redis.redis.smembers(QUEUES), ["retry"]);
    assert.equal(await ok(["clear", "queue:retry", "--yes"]), "cleared the queue retry (1 job)\n");
    assert.equal(await redis.redis.dbsize(), 0);
  });
});

describe("processes", () => {
  const ID = "web:42:0123456789ab";
  const EMBEDDED = "web:43:0123456789ac";
  async function seedProcesses(): Promise<void> {
    await redis.redis.sadd(PROCESSES, ID, EMBEDDED);
    const info = (id: string, embedded: boolean) =>
      JSON.stringify({
        hostname: "web",
        started_at: Date.now() / 1000 - 300,
        pid: 42,
        tag: "shop",
        concurrency: 5,
        queues: ["default"],
        labels: [],
        identity: id,
        embedded,
      });
    await redis.redis.hset(ID, {
      info: info(ID, false),
      busy: "2",
      beat: String(Date.now() / 1000),
      quiet: "false",
      rss: "40960",
      rtt_us: "100",
    });
    await redis.redis.hset(EMBEDDED, {
      info: info(EMBEDDED, true),
      busy: "0",
      beat: String(Date.now() / 1000),
      quiet: "false",
      rss: "1024",
      rtt_us: "100",
    });
  }

  test("quiet, stop and dump push the signal; --all skips embedded processes; stop --all needs --yes", async () => {
    await seedProcesses();
    assert.match(await ok(["quiet", ID]), new RegExp(`^${ID}: asked to stop fetching jobs \\(TSTP\\)\\n`));
    assert.match(await ok(["dump", ID]), /asked to log its threads\/busy jobs \(TTIN\)/);
    await fails(["stop", "--all"], 2, /stop --all needs confirmation/);
    assert.match(await ok(["stop", "--all", "--yes"]), new RegExp(`^${ID}: asked to stop \\(TERM\\)\\n\\(each acts`));
    assert.deepEqual(await redis.redis.lrange(signalsKey(ID), 0, -1), ["TERM", "TTIN", "TSTP"]);
    assert.equal(await redis.redis.exists(signalsKey(EMBEDDED)), 0);
    await fails(["quiet", EMBEDDED], 2, /is an embedded process; it ignores remote signals/);
    await fails(
      ["quiet", "nobody:1:000000000000"],
      1,
      /no live process nobody:1:000000000000 \(see tsqctl processes\)/,
    );
    await fails(["quiet"], 2, /give a process identity/);
    await fails(["dump"], 2, /missing required argument 'identity'/);
  });

  test("processes prints each process like sidekiqmon", async () => {
    await seedProcesses();
    const out = await ok(["processes"]);
    assert.match(out, /^2 processes, 10 slots, 41\.0 MB RSS\n/);
    assert.match(
      out,
      new RegExp(
        `\\n${ID} \\[shop\\]\\n  Started: .* UTC \\(5 min ago\\)\\n  Threads: 5 \\(2 busy\\)   RSS: 40\\.0 MB   Last beat: .*\\n   Queues: default\\n`,
      ),
    );
    assert.match(out, new RegExp(`\\n${EMBEDDED} \\[shop\\] \\[embedded\\]\\n`));
  });
});

describe("listings and errors", () => {
  test("text listings show what is there", async (t) => {
    await seed();
    const client = new Client({ redis: redis.redis });
    t.after(() => client.close());
    await client.push({ class: "NewJob", args: [7], queue: "low" });
    assert.match(
      await ok(["stats"]),
      /Enqueued\s+4\n[\s\S]*Retries\s+2\n[\s\S]*DAY \(UTC\)\s+PROCESSED\s+FAILED\n\d{4}-\d{2}-\d{2}\s+0\s+0\n/,
    );
    assert.match(
      await ok(["queues"]),
      /^QUEUE\s+SIZE\s+LATENCY\s+PAUSED\ndefault\s+2\s+.*\nlow\s+1\s+.*\nretry\s+1\s+.*\n$/,
    );
    assert.match(
      await ok(["queue", "low"]),
      /^queue low: 1 job, latency .*\nJID\s+CLASS\s+ARGS\s+ENQUEUED\n[0-9a-f]{24}\s+NewJob\s+\[7\]\s+.* ago\n$/,
    );
    const retries = await ok(["retries", "--limit", "1"]);
    assert.match(
      retries,
      /^retry set: 2 entries, newest first\nJID\s+CLASS\s+QUEUE\s+ARGS\s+NEXT RETRY\s+RETRIES\s+ERROR\nr2\s+HardJob\s+default\s+\["r2"\]\s+.*\s+3\s+RuntimeError: boom\n\(1 more; use --limit or --grep\)\n$/,
    );
    assert.match(await ok(["dead"]), /^dead set: 1 entry.*\n.*DIED.*\nd1 /);
    assert.match(
      await ok(["scheduled", "--grep", "s1"]),
      /^scheduled set: 1 entry, 1 shown matching "s1", newest first\n.*RUNS.*\ns1\s+HardJob\s+default\s+\["s1"\]\s+in /,
    );
  });

  test("bad values exit 2 with usage", async () => {
    await fails(["retries", "--limit", "-1"], 2, /--limit must be a whole number/);
    await fails(["stats", "--days", "0"], 2, /--days must be a whole number greater than 0/);
    await fails(["stats", "--days", "9999"], 2, /days must be a whole number from 1 to 1825/);
    await fails(["queue", ""], 2, /the queue name must not be empty/);
    await fails(["top", "--interval", "0.1"], 2, /--interval must be a number of seconds, at least 0\.5/);
    await fails(["clear"], 2, /missing required argument 'target'/);
    await fails(["clear", "", "--yes"], 2, /name a set \(retry, dead, scheduled\) or a queue/);
    await fails(["queues", "--bogus"], 2, /unknown option '--bogus'/);
  });

  test("an unreachable Redis exits 1 at once, for listings and actions", async () => {
    const url = `redis://127.0.0.1:${await freePort()}/0`;
    for (const args of [
      ["stats"],
      ["retries", "--json"],
      ["clear", "retry", "--yes"],
      ["quiet", "--all"],
      ["top", "--once"],
    ]) {
      const started = Date.now();
      const run = await tsqctl(args, { REDIS_URL: url });
      assert.equal(run.exitCode, 1, `${args.join(" ")}: ${run.stderr}`);
      assert.match(
        run.stderr,
        new RegExp(`^tsqctl ${args[0]}: cannot reach Redis at redis://127\\.0\\.0\\.1:\\d+/0: .*ECONNREFUSED`),
      );
      assert.equal(run.stdout, "");
      withinDeadline(Date.now() - started, 0, `tsqctl ${args[0]!} against a closed port`);
    }
  });
});
