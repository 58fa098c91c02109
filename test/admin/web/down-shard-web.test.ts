/**
 * The dashboard with a shard that is down, as `tsqctl web` opens it (a command deadline of
 * WEB_REDIS_DEADLINE_MS): a port with nothing listening, and a redis-server stopped with SIGSTOP (it
 * accepts connections and never answers). Each down shard's pages answer 503 within the deadline,
 * naming the shard and its host:port and never the password, while the healthy shard keeps answering
 * at once, during the wait too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { connect } from "../../../src/platform/redis/connection.js";
import { WEB_REDIS_DEADLINE_MS } from "../../../src/admin/web/index.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { WebSession, startWeb } from "./webHelpers.js";

const redis = useRedis();

/** Generous slack over the deadline for a loaded machine; an answer that never comes still fails. */
const SLACK_MS = 10_000;

const PATHS = [
  "/",
  "/stats",
  "/stats/queues",
  "/busy",
  "/queues",
  "/queues/x",
  "/retries",
  "/scheduled",
  "/morgue",
  "/retries/1795264707.5-abc",
  "/retries/export",
  "/metrics",
  "/metrics/SomeJob",
  "/cron",
  "/failures",
  "/search?q=abc",
  "/bulk",
];

/** A GET that gives up (failing the test) past the deadline plus slack. */
async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(WEB_REDIS_DEADLINE_MS + SLACK_MS) });
  return { status: res.status, body: await res.text() };
}

test("a down shard's pages are a 503 naming it within the deadline; the other shard keeps answering", async (t) => {
  const nothing = await freePort();
  const stoppedPort = await freePort();
  const stopped = spawn("redis-server", ["--port", String(stoppedPort), "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  t.after(() => {
    stopped.kill("SIGCONT");
    stopped.kill("SIGKILL");
  });
  const probe = connect(`redis://127.0.0.1:${stoppedPort}/0`, { commandTimeoutMs: 1000 });
  await eventually(async () => ((await probe.ping().catch(() => "")) === "PONG" ? true : undefined), 20_000, "up");
  probe.disconnect();
  stopped.kill("SIGSTOP");

  const open = (port: number) =>
    connect(`redis://:s3cret@127.0.0.1:${port}/0`, { name: "tsq-web", commandTimeoutMs: WEB_REDIS_DEADLINE_MS });
  const gone = open(nothing);
  const frozen = open(stoppedPort);
  t.after(() => {
    gone.disconnect();
    frozen.disconnect();
  });
  const web = await startWeb({
    redis: redis.redis,
    shards: [
      { name: "gone", redis: gone },
      { name: "frozen", redis: frozen },
    ],
  });
  t.after(() => web.stop());

  // One cookie serves every shard: the token from a healthy page is good for a down shard's form too.
  const session = new WebSession(web.url);
  const token = await session.token("/retries");
  for (const [shard, port] of [
    ["gone", nothing],
    ["frozen", stoppedPort],
  ] as const) {
    const started = performance.now();
    // Every page at once (each waits out its own deadline), and an action.
    const pending = PATHS.map(async (path) => ({ path, page: await get(`${web.url}/shards/${shard}${path}`) }));
    pending.push(
      session
        .post(`/shards/${shard}/queues/x`, [["authenticity_token", token]])
        .then((page) => ({ path: "POST /queues/x", page })),
    );
    // While the down shard's pages wait, the healthy one answers.
    const healthy = await get(`${web.url}/queues`);
    assert.equal(healthy.status, 200);
    for (const { path, page } of await Promise.all(pending)) {
      assert.equal(page.status, 503, `${shard}${path}: ${page.status} ${page.body.slice(0, 300)}`);
      assert.match(page.body, new RegExp(`shard &quot;${shard}&quot; at 127\\.0\\.0\\.1:${port}`), page.body);
      assert.ok(!page.body.includes("s3cret"), "the password is never shown");
    }
    const ms = performance.now() - started;
    assert.ok(ms < WEB_REDIS_DEADLINE_MS + SLACK_MS, `${shard}'s pages answered in ${ms.toFixed(0)} ms`);
  }
  const healthy = await get(`${web.url}/retries`);
  assert.equal(healthy.status, 200, "the default shard is unaffected afterwards");
});
