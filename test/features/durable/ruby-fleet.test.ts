/**
 * A Ruby Sidekiq 6.4.1 process in the same Redis is unaffected by tsq's cancel: while it runs its own
 * jobs, tsq cancels a running tsq job (through the owner's channel) and an unknown jid (through the
 * broadcast channel). Cancels travel on tsq-only pub/sub channels: Ruby's signal list stays empty, every
 * one of its jobs runs, and its log shows no error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { cancel } from "../../../src/features/durable/cancel.js";
import { PROCESSES } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../../helpers/sidekiqProcess.js";
import { CountJob, PoliteJob } from "../../jobs/durableJobs.js";

const handle = useRedis();
useSidekiqCleanup();
const RUBY_JOBS = 300;

test("tsq cancels a running job while a Ruby Sidekiq runs its jobs: Ruby runs them all, logs no error", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({ redis: handle, queues: ["ruby"], requireFile: rubyTestFile("fleet.rb") });
  t.after(() => sidekiq.stop());
  const launcher = testLauncher(handle.url, [PoliteJob, CountJob], {
    concurrency: 2,
    pollIntervalAverage: 0.2,
    heartbeatInterval: 0.5,
  });
  await launcher.start();
  t.after(() => launcher.stop());
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());

  const jid = (await client.push({ class: "PoliteJob", args: ["c"] }))!;
  await eventually(
    async () => Object.values(await handle.redis.hgetall(`${launcher.ctx.identity}:work`)).some((w) => w.includes(jid)),
    15_000,
    "the tsq job running and in its work hash",
  );
  // Ruby's jobs are pushed and run while the cancels go out.
  const pushing = client.pushBulk({
    class: "FleetJob",
    queue: "ruby",
    args: Array.from({ length: RUBY_JOBS }, (_, i) => ["tsq", i]),
  });
  await eventually(async () => (await handle.redis.llen("fleet")) > 0, 30_000, "Ruby running its jobs");
  const result = await cancel(jid, { redis: handle.redis });
  assert.equal(result.runningOn, launcher.ctx.identity, "the owner is the tsq process");
  assert.equal(result.notified, 1, "only the tsq process received it");
  const unknown = await cancel("0123456789abcdef01234567", { redis: handle.redis });
  assert.equal(unknown.notified, 1, "the broadcast reaches the tsq process only");
  await eventually(
    async () => (await handle.redis.lrange("c:runs", 0, -1)).includes("aborted:JobCancelledError"),
    10_000,
    "the tsq job aborted",
  );
  await pushing;
  await eventually(async () => (await handle.redis.llen("fleet")) === RUBY_JOBS, 60_000, "every Ruby job ran");

  assert.equal(Number(await handle.redis.get("fleet:ruby")), RUBY_JOBS, "each Ruby job once");
  assert.equal(await handle.redis.llen(`${sidekiq.identity}-signals`), 0, "no signal sent to Ruby");
  assert.equal(await handle.redis.sismember(PROCESSES, sidekiq.identity), 1, "Ruby still registered");
  assert.equal(await handle.redis.zcard("retry"), 0, "nothing retried");
  assert.equal(await handle.redis.zcard("dead"), 0, "nothing dead");
  const channels = (await handle.redis.pubsub("CHANNELS", "*")) as string[];
  assert.ok(
    channels.every((channel) => channel.startsWith("tsq:")),
    `only tsq channels are subscribed: ${channels.join(", ")}`,
  );
  const log = sidekiq.output();
  assert.doesNotMatch(log, /\b(ERROR|FATAL|WARN)\b|Exception|error_class/, `Ruby's log shows no error:\n${log}`);
});
