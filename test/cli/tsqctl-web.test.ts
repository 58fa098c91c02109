/**
 * `tsqctl web` as a user runs it: binds 127.0.0.1, serves the dashboard and /stats, takes its password
 * from the environment and never prints it, and stops on SIGTERM.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { useRedis } from "../helpers/redis.js";
import { eventually } from "../helpers/tsqProcess.js";
import { giveUpAfter } from "../helpers/timing.js";

const redis = useRedis();
const BIN = fileURLToPath(new URL("../../../bin/tsqctl.js", import.meta.url));

test("tsqctl web serves on loopback with Basic auth from the environment and stops on SIGTERM", async () => {
  await redis.redis.set("stat:processed", "42");
  const password = "web-password-never-shown";
  const child = execa(process.execPath, [BIN, "web", "--port", "0", "--username", "ops", "--redis-url", redis.url], {
    env: { TSQ_WEB_PASSWORD: password },
    reject: false,
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  try {
    const url = await eventually(async () => /on (http:\/\/\S+) /.exec(out)?.[1], 20_000, `the address line: ${out}`);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.match(out, /authentication on/);
    assert.equal((await fetch(`${url}stats`)).status, 401);
    const auth = { authorization: `Basic ${Buffer.from(`ops:${password}`).toString("base64")}` };
    const stats = (await (await fetch(`${url}stats`, { headers: auth })).json()) as { sidekiq: { processed: number } };
    assert.equal(stats.sidekiq.processed, 42);
    assert.equal((await fetch(url, { headers: auth })).status, 200);
  } finally {
    child.kill("SIGTERM");
  }
  const result = await child;
  assert.equal(result.exitCode, 0, String(result.stderr));
  assert.ok(!`${out}${String(result.stderr)}`.includes(password), "the password is never printed");
});

test("tsqctl web refuses --username without a password", async () => {
  const run = await execa(process.execPath, [BIN, "web", "--username", "ops", "--redis-url", redis.url], {
    env: { TSQ_WEB_PASSWORD: "" },
    reject: false,
    timeout: giveUpAfter(20_000),
  });
  assert.equal(run.exitCode, 2);
  assert.match(String(run.stderr), /TSQ_WEB_PASSWORD/);
});
