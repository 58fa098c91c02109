/**
 * TLS and ACL users against a real `redis-server --port 0 --tls-port P` requiring client certificates,
 * with certificates made here by openssl: tsq, tsq-cluster (configured by a `redis:` block) and tsqctl
 * work through `rediss://tsq:<password>@...` with CA, client certificate and an encrypted key; a wrong
 * CA fails with a message naming the certificate problem and the fix; and no password, passphrase or
 * key line appears in anything they print.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { Client } from "../../src/index.js";
import { startTlsRedis, type TlsRedis } from "../helpers/tlsRedis.js";
import { ROOT, TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { giveUpAfter } from "../helpers/timing.js";

process.env.REDIS_URL = "redis://127.0.0.1:1/0"; // nothing falls back to a real Redis by mistake

// Started at load (not in a hook), so the helper's cleanup runs after the whole file.
const server: TlsRedis = await startTlsRedis();
const outputs: { program: string; text: string }[] = [];

function tsqctl(args: string[]) {
  return execa(process.execPath, [join(ROOT, "bin/tsqctl.js"), ...args], {
    env: { REDIS_URL: "redis://127.0.0.1:1/0" },
    reject: false,
    timeout: giveUpAfter(30_000),
  });
}

/** The secrets a run must never print: the ACL password, the key passphrase, every line of the key. */
function secrets(): string[] {
  const keyLines = readFileSync(server.files.key, "utf8")
    .split("\n")
    .filter((line) => line.length > 0 && !line.startsWith("-----"));
  return [server.password, server.passphrase, encodeURIComponent(server.password), ...keyLines];
}

test("tsq, tsq-cluster and tsqctl work over TLS as an ACL user", async () => {
  const client = new Client({ redis: server.url() });
  assert.equal(await client.redis.call("ACL", "WHOAMI"), "tsq");
  await client.redis.del("ran");

  const worker = startTsq(["-r", TEST_JOBS, "--redis-url", server.url(), "-q", "tls", "-v"], {
    TSQ_LOG_FORMAT: "json",
  });
  await client.push({ class: "RecordJob", args: ["over-tls"], queue: "tls" });
  await eventually(
    async () => (await client.redis.llen("ran")) === 1,
    30_000,
    `the job did not run:\n${worker.output()}`,
  );
  assert.equal(await worker.stop(), 0);
  outputs.push({ program: "tsq", text: worker.output() });

  // tsq-cluster reads the same settings from a config file's redis: block.
  const config = join(server.dir, "tsq.yml");
  writeFileSync(
    config,
    [
      "redis:",
      `  url: rediss://127.0.0.1:${server.port}/0`,
      "  username: tsq",
      `  password: ${server.password}`,
      `  tls: { ca: ${server.files.ca}, cert: ${server.files.cert}, key: ${server.files.key}, passphrase: ${server.passphrase} }`,
      "queues: [cluster]",
      "",
    ].join("\n"),
  );
  const cluster = startTsq(
    ["-r", TEST_JOBS, "-C", config, "--processes", "2", "-v"],
    { TSQ_LOG_FORMAT: "json" },
    "bin/tsq-cluster.js",
  );
  await client.pushBulk({ class: "RecordJob", args: [["a"], ["b"], ["c"], ["d"]], queue: "cluster" });
  await eventually(
    async () => (await client.redis.llen("ran")) === 5,
    30_000,
    `cluster jobs did not run:\n${cluster.output()}`,
  );
  assert.equal(await cluster.stop(), 0);
  outputs.push({ program: "tsq-cluster", text: cluster.output() });

  const stats = await tsqctl(["stats", "--redis-url", server.url()]);
  assert.equal(stats.exitCode, 0, stats.stderr);
  assert.match(stats.stdout, /processed/i);
  outputs.push({ program: "tsqctl stats", text: `${stats.stdout}${stats.stderr}` });
  await client.close();
});

test("a wrong CA fails with a message naming the certificate problem and what to do", async () => {
  const stats = await tsqctl(["stats", "--redis-url", server.url(server.files.wrongCa)]);
  assert.notEqual(stats.exitCode, 0);
  assert.match(stats.stderr, /TLS certificate problem/);
  assert.match(stats.stderr, /tls_ca/);
  outputs.push({ program: "tsqctl (wrong CA)", text: `${stats.stdout}${stats.stderr}` });

  const worker = startTsq(["-r", TEST_JOBS, "--redis-url", server.url(server.files.wrongCa)], {
    TSQ_LOG_FORMAT: "json",
  });
  const line = await worker.waitForLine((l) => /TLS certificate problem/.test(String(l.msg)), 30_000);
  assert.match(String(line.msg), /give the CA that signed it/);
  await new Promise((r) => setTimeout(r, 2000)); // retries keep failing: still one line, not one per retry
  assert.equal(worker.lines.filter((l) => /TLS certificate problem/.test(String(l.msg))).length, 1);
  await worker.stop();
  outputs.push({ program: "tsq (wrong CA)", text: worker.output() });
  console.log(`wrong CA: ${stats.stderr.trim().split("\n")[0]}`);
});

test("no password, passphrase or key line in any output", () => {
  assert.ok(outputs.length >= 5, "the runs above did not all record their output");
  let lines = 0;
  for (const { program, text } of outputs) {
    assert.ok(text.length > 0, `${program} printed nothing`);
    lines += text.split("\n").length;
    for (const secret of secrets()) {
      assert.ok(!text.includes(secret), `${program} printed a secret (${secret.slice(0, 3)}…)`);
    }
  }
  console.log(`checked ${lines} output lines of ${outputs.length} runs for ${secrets().length} secrets`);
});
