/**
 * Text from Redis printed by tsqctl never drives the terminal: an error class holding OSC 52 (writes the
 * clipboard) and OSC 0 (retitles the window), in every listing and in `top`, is shown with its control
 * characters as escapes (`\x1b`, `\x07`); `--json` stays JSON.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/tsqctl.js";
import { Client } from "../../src/client/Client.js";
import { Batch } from "../../src/features/flow/batches/index.js";
import { DEAD, PROCESSES, QUEUES, RETRY, SIDEKIQ_CRON_JOBS, sidekiqCronJobKey } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";

const redis = useRedis();

const OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07";
const OSC0 = "\x1b]0;owned\x07";
const EVIL = `Evil${OSC52}Error${OSC0}`;
// eslint-disable-next-line no-control-regex -- looking for the raw bytes is the point
const RAW = /[\x00-\x08\x0b-\x1f\x7f]/;

async function tsqctl(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...argv, "--redis-url", redis.url], {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
  });
  return { code, out, err };
}

async function seed(): Promise<void> {
  const r = redis.redis;
  const now = Date.now() / 1000;
  const job = (jid: string) =>
    JSON.stringify({
      class: EVIL,
      args: [OSC0],
      jid,
      queue: `q${OSC0}`,
      created_at: now,
      enqueued_at: now,
      failed_at: now,
      retry_count: 1,
      error_class: EVIL,
      error_message: `msg ${OSC52}`,
    });
  await r.zadd(RETRY, now + 60, job("retry00000000000000000001"));
  await r.zadd(DEAD, now, job("dead000000000000000000001"));
  await r.sadd(QUEUES, "default", `q${OSC0}`);
  await r.lpush("queue:default", job("queued0000000000000000001"));
  await r.lpush(`queue:q${OSC0}`, job("queued0000000000000000002"));
  const identity = `host${OSC0}:1:abcdef`;
  await r.sadd(PROCESSES, identity);
  await r.hset(identity, {
    info: JSON.stringify({
      hostname: `host${OSC0}`,
      started_at: now - 10,
      pid: 1,
      tag: EVIL,
      concurrency: 2,
      queues: [`q${OSC0}`],
      labels: [OSC52],
      identity,
      version: OSC0,
    }),
    busy: "1",
    beat: String(now),
    quiet: "false",
    rss: "1000",
  });
  await r.hset(
    `${identity}:work`,
    "tid1",
    JSON.stringify({ queue: `q${OSC0}`, payload: job("work0000000000000000001"), run_at: now }),
  );
  await r.sadd(SIDEKIQ_CRON_JOBS, sidekiqCronJobKey(`nightly${OSC0}`));
  await r.hset(sidekiqCronJobKey(`nightly${OSC0}`), {
    name: `nightly${OSC0}`,
    klass: EVIL,
    cron: "0 3 * * *",
    args: JSON.stringify([OSC52]),
    message: JSON.stringify({ queue: `q${OSC0}`, class: EVIL, args: [OSC52] }),
    status: "enabled",
  });
  const client = new Client({ redis: redis.url });
  try {
    const batch = new Batch({ client, description: `import ${EVIL}` });
    await batch.jobs(async () => {
      await client.push({ class: "Member", args: [1] });
    });
  } finally {
    await client.close();
  }
}

test("every listing and top show control characters from Redis as escapes; --json is unchanged", async () => {
  await seed();
  const commands: string[][] = [
    ["queues"],
    ["queue", "default"],
    ["queue", `q${OSC0}`],
    ["retries"],
    ["dead"],
    ["processes"],
    ["batches"],
    ["cron", "list"],
    ["top", "--once"],
  ];
  for (const argv of commands) {
    const { code, out, err } = await tsqctl(...argv);
    assert.equal(code, 0, `tsqctl ${argv.join(" ")}: ${JSON.stringify(err)}`);
    assert.ok(!RAW.test(out), `tsqctl ${argv.join(" ")} printed a raw control character: ${JSON.stringify(out)}`);
    assert.ok(out.includes("\\x1b]"), `tsqctl ${argv.join(" ")} shows the escape visibly: ${JSON.stringify(out)}`);
    assert.ok(out.includes("\\x07"), `tsqctl ${argv.join(" ")} shows BEL visibly: ${JSON.stringify(out)}`);
  }
  // The header names the queue as the operator typed it, escaped too: a name pasted from elsewhere.
  const { out: header } = await tsqctl("queue", `q${OSC0}`);
  assert.match(header, /^queue q\\x1b\]0;owned\\x07: 1 job/);
  // JSON keeps the exact text (JSON.stringify escapes it as \u001b, which parses back to the byte).
  const { out } = await tsqctl("dead", "--json");
  const parsed = JSON.parse(out) as { entries: { error_class: string }[] };
  assert.equal(parsed.entries[0]!.error_class, EVIL);
  assert.ok(!RAW.test(out));
});
