/**
 * A shard that is down: a port with nothing listening, and a redis-server stopped with SIGSTOP (it
 * accepts connections and never answers). `tsqctl push` to its queue fails within the promised 10 s
 * naming the shard and its URL (no password); `tsqctl stats` and `tsqctl queues` show the healthy shard
 * and mark the down ones.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/tsqctl.js";
import { freePort, useRedis } from "../helpers/redis.js";
import { eventually } from "../helpers/tsqProcess.js";
import { withinDeadline } from "../helpers/timing.js";

const redis = useRedis();

async function tsqctl(argv: string[]): Promise<{ code: number; out: string; err: string; ms: number }> {
  let out = "";
  let err = "";
  const started = performance.now();
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t), env: {} });
  return { code, out, err, ms: performance.now() - started };
}

test("a down shard: push fails naming it within 10 s, stats marks it", async (t) => {
  const nothing = await freePort();
  const stoppedPort = await freePort();
  const stopped = spawn("redis-server", ["--port", String(stoppedPort), "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  t.after(() => {
    stopped.kill("SIGCONT");
    stopped.kill("SIGKILL");
  });
  await eventually(
    async () => {
      const { code } = await tsqctl(["stats", "--redis-url", `redis://127.0.0.1:${stoppedPort}`]);
      return code === 0 ? true : undefined;
    },
    20_000,
    "the second redis-server starts",
    100,
  );
  stopped.kill("SIGSTOP");
  const dir = mkdtempSync(join(tmpdir(), "tsq-down-"));
  const config = join(dir, "tsq.yml");
  writeFileSync(
    config,
    `redis_url: ${redis.url}\nshards:\n` +
      `  gone: { url: "redis://:s3cret@127.0.0.1:${nothing}/0", queues: [gq] }\n` +
      `  frozen: { url: "redis://:s3cret@127.0.0.1:${stoppedPort}/0", queues: [fq] }\n`,
  );

  await redis.redis.incrby("stat:processed", 7);
  await redis.redis.lpush("queue:alive", JSON.stringify({ class: "X", args: [], jid: "j1", queue: "alive" }));
  await redis.redis.sadd("queues", "alive");
  // Every command at once: each waits out the down shards' deadline, and none changes anything.
  const [pushGone, pushFrozen, stats, text, queues, queuesJson] = await Promise.all([
    tsqctl(["-C", config, "push", "X", "-q", "gq"]),
    tsqctl(["-C", config, "push", "X", "-q", "fq"]),
    tsqctl(["-C", config, "stats", "--json"]),
    tsqctl(["-C", config, "stats"]),
    tsqctl(["-C", config, "queues"]),
    tsqctl(["-C", config, "queues", "--json"]),
  ]);

  for (const [push, shard, port] of [
    [pushGone, "gone", nothing],
    [pushFrozen, "frozen", stoppedPort],
  ] as const) {
    assert.equal(push.code, 1, `push to ${shard}: ${push.err}`);
    assert.match(
      push.err,
      new RegExp(`cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0 \\(shard "${shard}"\\)`),
    );
    assert.ok(!push.err.includes("s3cret"), "the password is never printed");
    // The client's connect timeout (10 s by default) bounds a push to an unreachable shard.
    withinDeadline(push.ms, 10_000, `push to the ${shard} shard`);
  }

  assert.equal(stats.code, 0, stats.err);
  const json = JSON.parse(stats.out) as { processed: number; unreachable_shards?: Record<string, string> };
  assert.equal(json.processed, 7, "the healthy shard's figures");
  assert.deepEqual(Object.keys(json.unreachable_shards ?? {}).sort(), ["frozen", "gone"]);
  assert.ok(!stats.err.includes("s3cret") && !stats.out.includes("s3cret"));
  assert.match(text.out, /frozen\s+unreachable/);
  assert.match(text.out, /gone\s+unreachable/);

  // queues: the healthy shard's queues listed, each down shard marked, not a failure of the whole.
  assert.equal(queues.code, 0, queues.err);
  assert.match(queues.out, /^alive\s+1\s/m, "the healthy shard's queue");
  assert.match(queues.out, /shard "frozen": unreachable/);
  assert.match(queues.out, /shard "gone": unreachable/);
  assert.match(queues.err, /shard "gone"/);
  assert.ok(!queues.out.includes("s3cret") && !queues.err.includes("s3cret"));
  assert.equal(queuesJson.code, 0, queuesJson.err);
  const listed = JSON.parse(queuesJson.out) as { name: string; shard: string }[];
  assert.deepEqual(
    listed.map((q) => [q.name, q.shard]),
    [["alive", "default"]],
  );
});
