/**
 * Redis refusing writes (maxmemory reached with `noeviction`) is reported for what it is, with what to
 * do, once per condition: not as a bare `EXECABORT` at every heartbeat, nor as a bare `ReplyError: OOM`
 * from performAsync.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, startTsq } from "../helpers/tsqProcess.js";
import { scratchDir } from "../helpers/fixtures.js";
import { Client } from "../../src/client/Client.js";
import { EnqueueError } from "../../src/wire/errors.js";

const handle = useRedis();

async function outOfMemory(on: boolean): Promise<void> {
  await handle.redis.config("SET", "maxmemory-policy", "noeviction");
  await handle.redis.config("SET", "maxmemory", on ? "1" : "0"); // 1 byte: every write that grows memory is refused
}

test("performAsync against a full Redis throws EnqueueError saying the job was not enqueued and why", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(async () => {
    await outOfMemory(false);
    await client.close();
  });
  await outOfMemory(true);
  await assert.rejects(client.push({ class: "RecordJob", args: [1] }), (error: unknown) => {
    assert.ok(error instanceof EnqueueError, String(error));
    assert.match(
      error.message,
      /^job RecordJob \(jid [0-9a-f]{24}\) was not enqueued: Redis refused the write: Redis is out of memory/,
    );
    assert.match(error.message, /raise maxmemory/);
    assert.match(error.message, /Redis said: OOM/);
    return true;
  });
  await outOfMemory(false);
  assert.ok(await client.push({ class: "RecordJob", args: [2] }), "works again once memory is back");
});

test("a worker logs a full Redis once per condition, with advice, and once when it is over", async (t) => {
  const dir = scratchDir("tsq-oom");
  const config = join(dir, "tsq.yml");
  writeFileSync(config, "heartbeat_interval: 0.5\n");
  const tsq = startTsq(["-r", TEST_JOBS, "-C", config], { REDIS_URL: handle.url });
  t.after(async () => {
    await outOfMemory(false);
    await tsq.stop();
  });
  await tsq.waitForLine((l) => l.msg === "tsq worker started");
  await outOfMemory(true);
  const line = await tsq.waitForLine((l) => String(l.msg).startsWith("heartbeat failed"), 10_000);
  await new Promise((r) => setTimeout(r, 3000)); // several more beats
  assert.equal(line.condition, "oom");
  assert.match(String(line.msg), /Redis is out of memory .*raise maxmemory.*record and stats were not written/);
  assert.match(String(line.redis_reply), /^OOM /);
  const failures = tsq.lines.filter((l) => String(l.msg).startsWith("heartbeat failed"));
  assert.equal(failures.length, 1, "logged once, not at every beat");
  assert.ok(!tsq.lines.some((l) => /EXECABORT/.test(String(l.msg))), "no bare EXECABORT message");
  await outOfMemory(false);
  await tsq.waitForLine((l) => l.msg === "heartbeat works again", 5000);
});
