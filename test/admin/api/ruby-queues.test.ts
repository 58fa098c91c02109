/**
 * tsq's Queue API on jobs pushed by Ruby's client, and Ruby's `Sidekiq::Queue` on what tsq changed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { Queue } from "../../../src/admin/api/index.js";
import { QUEUES, queueKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { ruby } from "./rubyApi.js";

const redis = useRedis();

test("Ruby-pushed jobs: paged newest first, found, deleted by exact text and cleared through tsq; Ruby agrees", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const jids = await ruby<string[]>(
    redis,
    `Sidekiq::Client.push_bulk("class" => "HardJob", "args" => (0...120).map { |i| [i, 1.0, 2**60 + 1] }, "queue" => "bulk") +
     [Sidekiq::Client.push("class" => "HardJob", "args" => ["other"], "queue" => "other")]`,
  );
  const bulk = jids.slice(0, 120);
  assert.deepEqual(
    (await Queue.all(redis.redis)).map((q) => q.name),
    ["bulk", "other"],
  );
  const queue = new Queue(redis.redis, "bulk");
  assert.equal(await queue.size(), 120);

  const seen: string[] = [];
  for await (const job of queue) {
    seen.push(job.jid!);
    if ((job.args[0] as number) % 2 === 1) assert.equal(await queue.deleteJob(job), true, "LREM by Ruby's exact text");
  }
  assert.deepEqual(seen, [...bulk].reverse(), "push_bulk's last job first, none skipped while deleting");
  const [newest] = await queue.first(1);
  assert.match(newest!.value, /"args":\[118,1\.0,1152921504606846977\]/, "Ruby's text is what tsq holds");
  assert.equal((await queue.findJob(bulk[10]!))?.jid, bulk[10]);
  assert.equal(await queue.findJob(bulk[11]!), null, "deleted");
  const enqueuedAt = newest!.enqueuedAt!;
  assert.ok(Math.abs(enqueuedAt - Date.now() / 1000) < 30 && !Number.isInteger(enqueuedAt));

  const rubyLeft = await ruby<{ size: number; jids: string[] }>(
    redis,
    'q = Sidekiq::Queue.new("bulk"); { "size" => q.size, "jids" => q.map(&:jid) }',
  );
  assert.equal(rubyLeft.size, 60);
  assert.deepEqual(rubyLeft.jids, bulk.filter((_, i) => i % 2 === 0).reverse());

  assert.equal(await new Queue(redis.redis, "bulk").clear(), 60);
  assert.deepEqual(await ruby(redis, "Sidekiq::Queue.all.map(&:name)"), ["other"]);
});

test("Ruby's Queue#find_job(...).delete and #clear act on tsq-pushed jobs", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const client = new Client({ redis: redis.redis });
  const [a, b] = (await client.pushBulk({ class: "HardJob", args: [["a"], ["b"]], queue: "tsqq" })) as [string, string];
  await client.push({ class: "HardJob", args: [], queue: "gone" });
  const deleted = await ruby<boolean>(redis, 'Sidekiq::Queue.new("tsqq").find_job(ENV["JID"]).delete', { JID: a });
  assert.equal(deleted, true);
  assert.deepEqual(
    (await new Queue(redis.redis, "tsqq").first(10)).map((j) => j.jid),
    [b],
  );
  await ruby(redis, 'Sidekiq::Queue.new("gone").clear; true');
  assert.deepEqual(await redis.redis.smembers(QUEUES), ["tsqq"]);
  assert.equal(await redis.redis.exists(queueKey("gone")), 0);
  assert.deepEqual(
    (await Queue.all(redis.redis)).map((q) => q.name),
    ["tsqq"],
  );
});
