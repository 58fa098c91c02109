/**
 * Correlation ids (src/platform/correlation.ts): carried from the pushing context into the payload's
 * `correlation_id`, onto every log line of the job, and into the jobs it enqueues; none invented.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { useRedis } from "../../helpers/redis.js";
import { testOptions } from "../../helpers/options.js";
import { Client } from "../../../src/client/Client.js";
import { Job } from "../../../src/client/Job.js";
import { Launcher } from "../../../src/server/Launcher.js";
import { Registry } from "../../../src/server/Registry.js";
import { configureLogger, logger } from "../../../src/platform/logger.js";
import { withCorrelationId, currentCorrelationId } from "../../../src/platform/correlation.js";
import type { JobPayload } from "../../../src/wire/payload.js";

const redis = useRedis();

const lines: Record<string, unknown>[] = [];
configureLogger({
  level: "info",
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line.startsWith("{")) lines.push(JSON.parse(line));
      done();
    },
  }),
});

let seenInside: (string | undefined)[] = [];

class OrderJob extends Job {
  async perform(id: number): Promise<void> {
    seenInside.push(currentCorrelationId());
    logger().info({ order: id }, "charging the order");
    await MailJob.performAsync(id);
  }
}

class MailJob extends Job {
  perform(id: number): void {
    logger().info({ order: id }, "mailing the receipt");
  }
}

async function until(check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function launcher(): Launcher {
  const registry = new Registry();
  registry.register(OrderJob);
  registry.register(MailJob);
  return new Launcher(testOptions(redis.url), registry, { logger: logger() });
}

test("an id given with withCorrelationId reaches the payload, every log line of the job and the jobs it enqueues", async () => {
  lines.length = 0;
  seenInside = [];
  const client = new Client({ redis: redis.url });
  const jid = await withCorrelationId("req-7f3a", () => client.push({ class: OrderJob, args: [42] }));
  await client.close();
  const [raw] = await redis.redis.lrange("queue:default", 0, -1);
  assert.equal((JSON.parse(raw!) as JobPayload).correlation_id, "req-7f3a");

  const worker = launcher();
  await worker.start();
  await until(() => lines.some((l) => l.msg === "done" && l.class === "MailJob"));
  await worker.stop();
  assert.deepEqual(seenInside, ["req-7f3a"], "the job sees its id");
  const jobLines = lines.filter((l) => l.jid !== undefined);
  const mailJid = jobLines.find((l) => l.class === "MailJob")!.jid;
  for (const jobJid of [jid, mailJid]) {
    const mine = jobLines.filter((l) => l.jid === jobJid);
    assert.deepEqual(
      mine.map((l) => l.msg),
      ["start", jobJid === jid ? "charging the order" : "mailing the receipt", "done"],
    );
    for (const line of mine) assert.equal(line.correlation_id, "req-7f3a", `${String(line.msg)} carries the id`);
  }
});

test("a Ruby-style payload's correlation_id is logged; a push outside any context gets none", async () => {
  lines.length = 0;
  seenInside = [];
  const client = new Client({ redis: redis.url });
  await client.push({ class: "OrderJob", args: [1], correlation_id: "gitlab-abc" });
  await client.push({ class: "MailJob", args: [2] });
  await client.close();
  const payloads = (await redis.redis.lrange("queue:default", 0, -1)).map((raw) => JSON.parse(raw) as JobPayload);
  assert.equal(payloads.find((p) => p.class === "MailJob")!.correlation_id, undefined, "none invented");

  const worker = launcher();
  await worker.start();
  await until(() => lines.filter((l) => l.msg === "done").length === 3);
  await worker.stop();
  assert.deepEqual(seenInside, ["gitlab-abc"]);
  const mailLines = lines.filter((l) => l.class === "MailJob" && l.msg === "mailing the receipt");
  const byOrder = new Map(mailLines.map((l) => [l.order, l.correlation_id]));
  assert.equal(byOrder.get(1), "gitlab-abc", "the enqueued job inherits the id");
  assert.equal(byOrder.get(2), undefined);
  assert.throws(() => withCorrelationId("", () => undefined), /non-empty string/);
});
