/**
 * tsqctl's sentences read right: "1 process", "1 job", "1 entry" (never "1 processes"), plurals from
 * 2 on; and `stats` says its Busy figure is as of the processes' last heartbeat.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/tsqctl.js";
import { Client } from "../../src/client/Client.js";
import { RETRY } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { addProcess } from "../admin/web/webHelpers.js";

const redis = useRedis();

async function tsqctl(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...argv, "--redis-url", redis.url], {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
  });
  return { code, out, err };
}

const entry = (jid: string) =>
  JSON.stringify({ class: "FailJob", args: [], jid, queue: "default", retry_count: 1, failed_at: 1795264707.5 });

test("one of a thing is singular, two are plural", async () => {
  await redis.redis.flushdb();
  await addProcess(redis.redis, "host:1:aaaaaaaaaaaa", "one");
  const one = await tsqctl(["processes"]);
  assert.equal(one.code, 0, one.err);
  assert.match(one.out, /^1 process, 5 slots,/m);
  await addProcess(redis.redis, "host:2:bbbbbbbbbbbb", "two");
  assert.match((await tsqctl(["processes"])).out, /^2 processes, 10 slots,/m);

  const client = new Client({ redis: redis.redis });
  await client.push({ class: "A", args: [], queue: "solo" });
  assert.match((await tsqctl(["queue", "solo"])).out, /^queue solo: 1 job, latency/m);
  await client.push({ class: "A", args: [], queue: "solo" });
  assert.match((await tsqctl(["queue", "solo"])).out, /^queue solo: 2 jobs, latency/m);

  await redis.redis.zadd(RETRY, "1795264707.5", entry("r1"));
  assert.match((await tsqctl(["retries"])).out, /: 1 entry, newest first/);
  const cleared = await tsqctl(["clear", "retry", "--yes"]);
  assert.equal(cleared.code, 0, cleared.err);
  assert.match(cleared.out, /\(1 job\)/);
  await redis.redis.zadd(RETRY, "1795264707.5", entry("r2"));
  const retried = await tsqctl(["retry", "--all", "--yes"]);
  assert.equal(retried.code, 0, retried.err);
  assert.match(retried.out, /retried 1 job from/);
  const all = `${one.out}${retried.out}${cleared.out}`;
  assert.doesNotMatch(all, /\b1 (processes|jobs|entries|slots)\b/);
});

test("stats says Busy is as of the last heartbeat, in the table and in --help", async () => {
  await redis.redis.flushdb();
  await addProcess(redis.redis, "host:1:aaaaaaaaaaaa", "one");
  const stats = await tsqctl(["stats"]);
  assert.equal(stats.code, 0, stats.err);
  assert.match(stats.out, /Busy \(at last heartbeat\)\s+1\b/);
  let help = "";
  await main(["stats", "--help"], { out: (t) => void (help += t), err: (t) => void (help += t), env: {} }).catch(
    () => undefined,
  );
  assert.match(help, /busy jobs \(as of each process.s last\s+heartbeat/);
});
