/**
 * Redis Cluster over TLS (`rediss+cluster://`): six nodes that speak only TLS, to clients, to their
 * replicas and on the cluster bus, with certificates made here by openssl. A real `tsq` runs jobs
 * pushed by a client to two slot groups with the CA, a client certificate and its encrypted key given
 * in the URL; `tsqctl stats` reads the groups; a wrong CA fails with the certificate explained (tsqctl
 * exits non-zero, a worker says it once); and no
 * passphrase or key line appears in anything printed. Slow tier: a second cluster beside the fast
 * tier's plain one, whose only new part is the TLS connection settings.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";
import { startRedisCluster, pushRecordJobs, type RedisClusterSetup } from "../../helpers/redisCluster.js";
import { makeCertificates } from "../../helpers/tlsRedis.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { tsqctl } from "../../helpers/tsqctl.js";

const record = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/clusterJobs.js");
const PASSPHRASE = "cluster-key-Passphrase-5e71a0";
const dir = mkdtempSync(join(tmpdir(), "tsq-tls-cluster-"));
let cluster: RedisClusterSetup;
const outputs: { program: string; text: string }[] = [];

before(async () => {
  makeCertificates(dir, PASSPHRASE);
  cluster = await startRedisCluster({ dir });
});
after(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The cluster's URL with the client's TLS files (`ca` replaced for the wrong-CA case). */
function tlsUrl(ca = join(dir, "ca.pem")): string {
  const params = new URLSearchParams({
    tls_ca: ca,
    tls_cert: join(dir, "client.pem"),
    tls_key: join(dir, "client.key"),
    tls_key_passphrase: PASSPHRASE,
  });
  return `${cluster.url}?${params.toString()}`;
}

test("a client and a tsq worker run jobs of two slot groups over TLS, and tsqctl reads them", async () => {
  const client = new Client({ redis: tlsUrl() });
  const workers = ["tls-a", "tls-b"].map((queue) =>
    startTsq(["-r", JOBS, "--redis-url", tlsUrl(), "-q", queue, "-c", "5"], {
      TSQ_RECORD_URL: record.url,
      TSQ_LOG_FORMAT: "json",
      REDIS_URL: "redis://127.0.0.1:1/0",
    }),
  );
  try {
    await pushRecordJobs(client, "tls-a", 100, 0);
    await pushRecordJobs(client, "tls-b", 50, 0);
    const ran = async () => [Number(await record.redis.get("ran:tls-a")), Number(await record.redis.get("ran:tls-b"))];
    await eventually(
      async () => (await ran()).join() === "100,50",
      30_000,
      `not every job ran over TLS: ${(await ran()).join("/")} of 100/50\n${workers.map((w) => w.output().slice(-2000)).join("\n")}`,
    );
    assert.equal(Number(await record.redis.get("runs")), 150, "a job ran twice");
    // The group's keys are on the master serving its tag, reached over TLS.
    const slot = Number(await client.redis.call("CLUSTER", "KEYSLOT", "{tls-a}"));
    const master = cluster.node(await cluster.masterOf(slot));
    assert.equal(await master.sismember("{tls-a}queues", "tls-a"), 1);
    // A stop writes the processed counts of its last heartbeat's interval.
    for (const worker of workers) assert.equal(await worker.stop(), 0);
    const stats = await tsqctl(["stats", "--redis-url", tlsUrl(), "--json"], { REDIS_URL: "redis://127.0.0.1:1/0" });
    assert.equal(stats.exitCode, 0, stats.stderr);
    outputs.push({ program: "tsqctl stats", text: `${stats.stdout}${stats.stderr}` });
    assert.equal((JSON.parse(stats.stdout) as { processed: number }).processed, 150, stats.stdout);
  } finally {
    for (const worker of workers) {
      await worker.stop();
      outputs.push({ program: "tsq", text: worker.output() });
    }
    await client.close();
  }
});

test("a wrong CA fails with the certificate problem named, and the fix", async () => {
  const stats = await tsqctl(["stats", "--redis-url", tlsUrl(join(dir, "wrong-ca.pem"))], {
    REDIS_URL: "redis://127.0.0.1:1/0",
  });
  assert.notEqual(stats.exitCode, 0, `${stats.stdout}\n${stats.stderr}`);
  assert.match(stats.stderr, /TLS certificate problem/);
  assert.match(stats.stderr, /tls_ca/);
  outputs.push({ program: "tsqctl (wrong CA)", text: `${stats.stdout}${stats.stderr}` });

  // A worker waits for Redis, but says why it cannot reach it, once.
  const worker = startTsq(["-r", JOBS, "--redis-url", tlsUrl(join(dir, "wrong-ca.pem")), "-q", "tls-a"], {
    TSQ_RECORD_URL: record.url,
    TSQ_LOG_FORMAT: "json",
    REDIS_URL: "redis://127.0.0.1:1/0",
  });
  try {
    const line = await worker.waitForLine((l) => /TLS certificate problem/.test(String(l.msg)), 30_000);
    assert.match(String(line.msg), /give the CA that signed it/);
  } finally {
    await worker.stop();
    outputs.push({ program: "tsq (wrong CA)", text: worker.output() });
  }
});

test("no passphrase or key line in any output", () => {
  assert.ok(outputs.length >= 5, "the runs above did not all record their output");
  const keyLines = readFileSync(join(dir, "client.key"), "utf8")
    .split("\n")
    .filter((line) => line.length > 0 && !line.startsWith("-----"));
  for (const { program, text } of outputs) {
    assert.ok(text.length > 0, `${program} printed nothing`);
    for (const secret of [PASSPHRASE, ...keyLines])
      assert.ok(!text.includes(secret), `${program} printed a secret (${secret.slice(0, 3)}…)`);
  }
});
