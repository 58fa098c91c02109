/**
 * `tsqctl ... --json` listings never inflate GitLab-compressed args: a dead job (and a retry, and a
 * queued job) whose args inflate to 50 MB is listed with its args as stored plus `args_compressed` and
 * `args_compressed_bytes`, so the output stays about the size of what Redis holds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";
import { execa } from "execa";
import { DEAD, QUEUES, RETRY, queueKey } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { giveUpAfter } from "../helpers/timing.js";

const redis = useRedis();
const BIN = fileURLToPath(new URL("../../../bin/tsqctl.js", import.meta.url));

/** Bytes the bomb's args inflate to: 50 MB of JSON text. */
const INFLATED_BYTES = 50 * 1024 * 1024;
/** Bytes a listing of three such jobs may print: their stored text (~70 KB each) and the rest of the row. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/** Args of one 50 MB string, deflated (~50 KB) and base64-encoded (~70 KB), as GitLab stores them. */
function bombArgs(): string {
  const inflated = JSON.stringify(["ab".repeat((INFLATED_BYTES - 6) / 2)]);
  return deflateSync(inflated, { level: 9 }).toString("base64");
}

function bombJob(jid: string, args: string): string {
  return JSON.stringify({
    class: "BombJob",
    queue: "default",
    args: [args],
    compressed: true,
    original_job_size_bytes: INFLATED_BYTES,
    jid,
    created_at: 1795264700.5,
    enqueued_at: 1795264700.5,
    failed_at: 1795264710.5,
    retry_count: 3,
    error_class: "RuntimeError",
    error_message: "boom",
  });
}

async function tsqctl(args: string[]): Promise<{ stdout: string; ms: number }> {
  if (!redis.url) throw new Error("the private Redis is not running");
  const started = performance.now();
  const run = await execa(process.execPath, [BIN, ...args, "--json"], {
    env: { REDIS_URL: redis.url },
    reject: false,
    timeout: giveUpAfter(120_000),
    maxBuffer: 1024 * 1024 * 1024, // the old code printed the inflated args; let it, so the size check fails
  });
  assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  return { stdout: String(run.stdout), ms: performance.now() - started };
}

type Row = Record<string, unknown>;

test("--json listings keep compressed args as stored and mark them; the output stays small", async () => {
  const args = bombArgs();
  assert.ok(args.length > 40_000 && args.length < 150_000, `compressed args of ${args.length} characters`);
  const storedBytes = Buffer.from(args, "base64").length;
  await redis.redis.zadd(DEAD, "1795264800.5", bombJob("bombdead0000000000000001", args));
  await redis.redis.zadd(
    DEAD,
    "1795264700.5",
    JSON.stringify({ class: "PlainJob", args: [1], jid: "plain000000000000000001" }),
  );
  await redis.redis.zadd(RETRY, "1895264800.5", bombJob("bombretry000000000000001", args));
  await redis.redis.sadd(QUEUES, "default");
  await redis.redis.lpush(queueKey("default"), bombJob("bombqueue000000000000001", args));

  const listings: [string[], (json: Row) => Row[]][] = [
    [["dead"], (json) => json.entries as Row[]],
    [["retries"], (json) => json.entries as Row[]],
    [["queue", "default"], (json) => json.jobs as Row[]],
  ];
  for (const [command, rowsOf] of listings) {
    const { stdout, ms } = await tsqctl(command);
    console.log(`tsqctl ${command.join(" ")} --json: ${stdout.length} bytes in ${Math.round(ms)} ms`);
    assert.ok(stdout.length < MAX_OUTPUT_BYTES, `tsqctl ${command.join(" ")} --json printed ${stdout.length} bytes`);
    const bomb = rowsOf(JSON.parse(stdout) as Row).find((row) => row.class === "BombJob");
    assert.ok(bomb, `tsqctl ${command.join(" ")} lists the job`);
    assert.deepEqual(
      [bomb.args, bomb.args_compressed, bomb.args_compressed_bytes],
      [[args], true, storedBytes],
      "args as stored, marked compressed, with their stored size",
    );
  }

  const { stdout } = await tsqctl(["dead"]);
  const plain = (JSON.parse(stdout) as { entries: Row[] }).entries.find((row) => row.class === "PlainJob");
  assert.deepEqual(plain?.args, [1]);
  assert.ok(!("args_compressed" in plain) && !("args_compressed_bytes" in plain), "no marker on plain args");
});
