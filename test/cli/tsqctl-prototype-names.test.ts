/**
 * Names typed by the operator or read from Redis that are also Object.prototype's members (`constructor`,
 * `__proto__`): `tsqctl clear constructor` clears the queue of that name, not a sorted set, and
 * `tsqctl stats` across shards sums queues of those names like any other.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/tsqctl.js";
import { connect } from "../../src/platform/redis/connection.js";
import { useRedis } from "../helpers/redis.js";

const redis = useRedis();

async function tsqctl(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t), env: {} });
  return { code, out, err };
}

function job(jid: string, queue: string): string {
  return JSON.stringify({ class: "X", args: [], queue, jid, retry: true, created_at: 1, enqueued_at: 1 });
}

for (const name of ["constructor", "__proto__"]) {
  test(`tsqctl clear ${name} clears the queue of that name, not a sorted set`, async () => {
    const r = redis.redis;
    await r.sadd("queues", name);
    await r.rpush(`queue:${name}`, job("q1", name), job("q2", name));
    for (const set of ["schedule", "retry", "dead"]) await r.zadd(set, 1, job(`${set}-1`, "default"));

    const result = await tsqctl(["clear", name, "--yes", "--json", "--redis-url", redis.url]);
    assert.equal(result.code, 0, result.err);
    assert.deepEqual(JSON.parse(result.out), { action: "clear", target: `queue:${name}`, count: 2, ids: [] });
    assert.equal(await r.llen(`queue:${name}`), 0);
    for (const set of ["schedule", "retry", "dead"]) assert.equal(await r.zcard(set), 1, `${set} untouched`);
  });
}

test("tsqctl stats sums queues named constructor and __proto__ across shards", async (t) => {
  // Two shards on one private server: db 0 is the default Redis, db 1 the "bulk" shard.
  const shardUrl = redis.url.replace(/\/0$/, "/1");
  const other = connect(shardUrl, { name: "tsq-test-shard" });
  t.after(() => other.disconnect());
  await other.flushdb();
  // Pairs, not object literals: `{ __proto__: 1 }` would set a prototype, not a key.
  const sizes: [typeof other, [string, number][]][] = [
    [
      redis.redis,
      [
        ["constructor", 2],
        ["__proto__", 1],
        ["default", 1],
      ],
    ],
    [
      other,
      [
        ["constructor", 3],
        ["__proto__", 4],
        ["bulk", 5],
      ],
    ],
  ];
  for (const [r, queues] of sizes) {
    for (const [name, size] of queues) {
      await r.sadd("queues", name);
      for (let i = 0; i < size; i++) await r.rpush(`queue:${name}`, job(`${name}-${i}`, name));
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "tsq-proto-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, "tsq.yml");
  writeFileSync(config, `redis_url: ${redis.url}\nshards:\n  bulk: { url: "${shardUrl}", queues: [bulk] }\n`);

  const result = await tsqctl(["-C", config, "stats", "--json"]);
  assert.equal(result.code, 0, result.err);
  const stats = JSON.parse(result.out) as { queues: Record<string, unknown>; enqueued: number };
  assert.ok(Object.hasOwn(stats.queues, "constructor"), "constructor summed as a queue");
  assert.ok(Object.hasOwn(stats.queues, "__proto__"), "__proto__ kept as a queue name");
  assert.equal(stats.queues["constructor"], 5);
  assert.equal(stats.queues["__proto__"], 5);
  assert.equal(stats.queues["default"], 1);
  assert.equal(stats.queues["bulk"], 5);
  assert.equal(stats.enqueued, 16);
});
