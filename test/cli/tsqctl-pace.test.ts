/**
 * `tsqctl retry --all --pace <jobs/s>`: the set drains at the pace, Ctrl-C (SIGINT, to a real process)
 * ends it between batches with nothing lost, and --pace anywhere else is a usage error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { tsqctl as runTsqctl } from "../helpers/tsqctl.js";
import { DEAD } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { withinDeadline, giveUpAfter } from "../helpers/timing.js";

const redis = useRedis();

function tsqctl(args: string[]) {
  if (!redis.url) throw new Error("the private Redis is not running");
  return runTsqctl(args, { REDIS_URL: redis.url });
}

async function fillDead(n: number): Promise<void> {
  const args: string[] = [];
  for (let i = 0; i < n; i++)
    args.push(
      String(1795264710 + i),
      JSON.stringify({ class: "HardJob", args: [i], jid: `pace${i}`, queue: "default" }),
    );
  await redis.redis.zadd(DEAD, ...args);
}

test("retry --all --pace 40 retries 80 dead jobs in about 2 s", async () => {
  await fillDead(80);
  const started = performance.now();
  const run = await tsqctl(["retry", "--all", "--set", "dead", "--pace", "40", "--yes"]);
  const seconds = (performance.now() - started) / 1000;
  assert.equal(run.exitCode, 0, String(run.stderr));
  assert.match(String(run.stdout), /retried 80 jobs from the dead set/);
  assert.equal(await redis.redis.llen("queue:default"), 80);
  // The last of 20 batches-of-4 is taken at 1.9 s: never sooner. The process start adds a little, a
  // lot on a busy machine, so the upper bound only tells the pace from one ten times slower (20 s).
  withinDeadline(seconds * 1000, 1900, "80 dead jobs at --pace 40", 1800);
});

test("Ctrl-C stops a paced retry between batches: every entry is in the set or its queue", async () => {
  await fillDead(200);
  const bin = fileURLToPath(new URL("../../../bin/tsqctl.js", import.meta.url));
  const child = execa(process.execPath, [bin, "retry", "--all", "--set", "dead", "--pace", "20", "--yes"], {
    env: { REDIS_URL: redis.url },
    reject: false,
    timeout: giveUpAfter(30_000),
  });
  const deadline = Date.now() + 10_000;
  while ((await redis.redis.llen("queue:default")) < 10 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  child.kill("SIGINT");
  const run = await child;
  assert.equal(run.exitCode, 0, String(run.stderr));
  const [left, moved] = [await redis.redis.zcard(DEAD), await redis.redis.llen("queue:default")];
  assert.equal(left + moved, 200, `${left} left + ${moved} retried`);
  assert.ok(left > 150, `stopped early: ${left} left`);
  assert.match(String(run.stdout), new RegExp(`retried ${moved} jobs`));
});

test("--pace only goes with retry --all", async () => {
  await fillDead(1);
  const one = await tsqctl(["retry", "pace0", "--pace", "5"]);
  assert.equal(one.exitCode, 2);
  assert.match(String(one.stderr), /--pace goes with retry --all/);
  assert.equal((await tsqctl(["retry", "--all", "--pace", "0", "--yes"])).exitCode, 2);
  assert.equal((await tsqctl(["kill", "--all", "--pace", "5", "--yes"])).exitCode, 2);
  assert.equal(await redis.redis.zcard(DEAD), 1, "nothing changed");
});
