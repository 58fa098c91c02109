/**
 * tsq and a Ruby app running sidekiq-unique-jobs exclude each other's duplicates. The Ruby side is the
 * real Sidekiq 6.4.1 client and server with test/ruby/suj_gem.rb, which takes and releases locks as the
 * gem's client and server middleware do; tsq's side is a real Client and a real `tsq` worker process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { lockDigest } from "../../../../src/features/locks/sidekiq-unique-jobs/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { requireRubySidekiq } from "../../../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../../../helpers/sidekiqProcess.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { SujExecutedJob, SujFloatJob } from "../../../jobs/sujJobs.js";

const handle = useRedis();
useSidekiqCleanup();
const JOBS = join(ROOT, "dist/test/jobs/sujJobs.js");

function rubySuj(command: "push" | "unlock", params: Record<string, unknown>): Record<string, unknown> {
  const run = spawnSync("ruby", [join(ROOT, "test/ruby/suj_lock.rb"), command, JSON.stringify(params)], {
    env: { ...process.env, REDIS_URL: handle.url },
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `suj_lock.rb ${command} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ redis: handle.url });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const holders = (digest: unknown) => handle.redis.hkeys(`${String(digest)}:LOCKED`);

test("a lock a Ruby app holds blocks a tsq push, and a lock tsq holds blocks a Ruby push", async (t) => {
  if (!requireRubySidekiq(t)) return;
  await withClient(async (client) => {
    const ruby = rubySuj("push", {
      class: "SujExecutedJob",
      queue: "default",
      args: '[42, "a"]',
      lock: "until_executed",
      lock_ttl: 600,
    });
    assert.equal(typeof ruby.jid, "string", "Ruby took the lock and pushed");
    const digest = lockDigest({ class: "SujExecutedJob", queue: "default", lock_args: [42, "a"] });
    assert.equal(ruby.digest, digest, "tsq computes the digest Ruby wrote");
    assert.deepEqual(await holders(digest), [ruby.jid]);

    assert.equal(await client.push({ class: SujExecutedJob, args: [42, "a"] }), null, "tsq refuses the duplicate");
    assert.equal(await handle.redis.llen("queue:default"), 1, "only Ruby's job is queued");
    const other = await client.push({ class: SujExecutedJob, args: [43, "a"] });
    assert.ok(other, "other arguments are another lock");

    // Ruby's server unlocks after perform: tsq may push again, and now holds the lock.
    assert.equal(rubySuj("unlock", { digest, jid: ruby.jid, lock: "until_executed" }).unlocked, ruby.jid);
    const mine = await client.push({ class: SujExecutedJob, args: [42, "a"] });
    assert.ok(mine, "accepted once Ruby released it");
    assert.deepEqual(await holders(digest), [mine]);
    const time = Number(await handle.redis.hget(`${digest}:LOCKED`, mine));
    assert.ok(Math.abs(time - Date.now() / 1000) < 60, `the lock time is epoch seconds, as the gem writes (${time})`);
    assert.notEqual(await handle.redis.zscore("uniquejobs:digests", digest), null, "indexed in uniquejobs:digests");
    const ttl = await handle.redis.pttl(`${digest}:LOCKED`);
    assert.ok(ttl > 590_000 && ttl <= 600_000, `expires after lock_ttl (PTTL ${ttl} ms)`);

    // tsq's payload carries the gem's fields, so a Ruby worker with the gem honours it.
    const stored = (await handle.redis.lrange("queue:default", 0, -1)).map(
      (j) => JSON.parse(j) as Record<string, unknown>,
    );
    const payload = stored.find((j) => j.jid === mine)!;
    assert.equal(payload.lock, "until_executed");
    assert.equal(payload.lock_digest, digest);
    assert.deepEqual(payload.lock_args, [42, "a"]);
    assert.equal(payload.lock_ttl, 600);
    assert.equal(payload.lock_timeout, 0);
    assert.equal(payload.lock_prefix, "uniquejobs");

    const refused = rubySuj("push", {
      class: "SujExecutedJob",
      queue: "default",
      args: '[42, "a"]',
      lock: "until_executed",
      lock_ttl: 600,
    });
    assert.equal(refused.jid, null, "Ruby refuses the duplicate of tsq's job");
    assert.equal(refused.digest, digest);
    assert.deepEqual(await holders(digest), [mine], "tsq still holds it");
  });
});

test("Ruby's 1.0 and tsq's rubyFloat are one lock; Ruby's 3 and rubyFloat(3) are not", async (t) => {
  if (!requireRubySidekiq(t)) return;
  await withClient(async (client) => {
    const float = rubySuj("push", {
      class: "SujFloatJob",
      queue: "default",
      args: "[2.0]",
      lock: "until_executed",
      lock_ttl: 600,
    });
    assert.equal(typeof float.jid, "string");
    assert.equal(await client.push({ class: SujFloatJob, args: [2] }), null, "rubyFloat(2) in lockArgs is Ruby's 2.0");
    const integer = rubySuj("push", {
      class: "SujFloatJob",
      queue: "default",
      args: "[3]",
      lock: "until_executed",
      lock_ttl: 600,
    });
    assert.equal(typeof integer.jid, "string");
    assert.ok(await client.push({ class: SujFloatJob, args: [3] }), "Ruby's integer 3 is another digest than 3.0");
  });
});

test("jobs Ruby pushed with the gem, run by a tsq worker, release their locks after perform", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const params = { queue: "default", args: "[7, 1]", lock: "until_executed", lock_ttl: 600 };
  const declared = rubySuj("push", { ...params, class: "SujExecutedJob" });
  // The tsq class declares no lock: the payload's fields are what count, as for the gem's server.
  const undeclared = rubySuj("push", { ...params, class: "SujUndeclaredJob" });
  for (const ruby of [declared, undeclared]) {
    assert.equal(typeof ruby.jid, "string");
    assert.deepEqual(await holders(ruby.digest), [ruby.jid]);
  }
  const worker = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
  t.after(() => worker.stop(5000));
  for (const ruby of [declared, undeclared]) {
    await eventually(
      async () => (await handle.redis.lrange("ran", 0, -1)).includes(String(ruby.jid)),
      30_000,
      "runs on tsq",
    );
    await eventually(async () => (await holders(ruby.digest)).length === 0, 10_000, "the lock is released");
    assert.equal(
      await handle.redis.zscore("uniquejobs:digests", String(ruby.digest)),
      null,
      "unindexed, as the gem's unlock",
    );
  }
  const again = rubySuj("push", { ...params, class: "SujExecutedJob" });
  assert.equal(typeof again.jid, "string", "Ruby may push it again");
});

test("a job tsq pushed, run by a Ruby Sidekiq with the gem's server middleware, releases its lock there", async (t) => {
  if (!requireRubySidekiq(t)) return;
  await withClient(async (client) => {
    const jid = (await client.push({ class: SujExecutedJob, args: [11, 1] }))!;
    assert.ok(jid);
    const digest = lockDigest({ class: "SujExecutedJob", queue: "default", lock_args: [11, 1] });
    const refused = rubySuj("push", {
      class: "SujExecutedJob",
      queue: "default",
      args: "[11, 1]",
      lock: "until_executed",
      lock_ttl: 600,
    });
    assert.equal(refused.jid, null, "Ruby refuses the duplicate before running anything");
    const sidekiq = await startSidekiq({ redis: handle, requireFile: rubyTestFile("suj_worker.rb") });
    t.after(() => sidekiq.stop());
    await eventually(
      async () => (await handle.redis.lrange("ran", 0, -1)).includes(jid),
      30_000,
      "Ruby runs tsq's job",
    );
    await eventually(async () => (await holders(digest)).length === 0, 10_000, "Ruby's unlock releases tsq's lock");
    assert.ok(await client.push({ class: SujExecutedJob, args: [11, 1] }), "tsq may push it again");
  });
});
