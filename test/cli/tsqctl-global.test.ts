/**
 * Global options on either side of the command, as kubectl, `git -C` and redis-cli users type them:
 * `tsqctl --redis-url URL stats` and `tsqctl stats --redis-url URL` are the same, and the option after
 * the command wins when both are given.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../helpers/tsqctl.js";
import { useRedis } from "../helpers/redis.js";

const redis = useRedis();
const UNREACHABLE = "redis://127.0.0.1:1/0";

async function tsqctl(args: string[]) {
  // REDIS_URL points nowhere: only the flag can make these work.
  return runTsqctl(args, { REDIS_URL: UNREACHABLE });
}

test("--redis-url and --json before the command", async () => {
  await redis.redis.incrby("stat:processed", 7);
  for (const args of [
    ["--redis-url", redis.url, "stats", "--json"],
    ["--redis-url", redis.url, "--json", "stats"],
    [`--redis-url=${redis.url}`, "stats", "--json"],
    ["stats", "--redis-url", redis.url, "--json"],
    ["--json", "stats", "--redis-url", redis.url],
  ]) {
    const run = await tsqctl(args);
    assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
    assert.equal((JSON.parse(String(run.stdout)) as { processed: number }).processed, 7, args.join(" "));
  }
});

test("the option after the command wins over the one before it", async () => {
  const run = await tsqctl(["--redis-url", UNREACHABLE, "queues", "--redis-url", redis.url, "--json"]);
  assert.equal(run.exitCode, 0, run.stderr);
  assert.deepEqual(JSON.parse(String(run.stdout)), []);
});

test("a global option works for every command group", async () => {
  for (const command of [["queues"], ["retries"], ["dead"], ["scheduled"], ["processes"], ["cron", "list"]]) {
    const run = await tsqctl(["--redis-url", redis.url, ...command, "--json"]);
    assert.equal(run.exitCode, 0, `${command.join(" ")}: ${run.stderr}`);
    JSON.parse(String(run.stdout));
  }
  const pushed = await tsqctl(["--redis-url", redis.url, "push", "RecordJob", "[1]"]);
  assert.equal(pushed.exitCode, 0, pushed.stderr);
  assert.equal(await redis.redis.llen("queue:default"), 1);
});
