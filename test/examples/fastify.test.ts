/**
 * examples/fastify, compiled as an app compiles it (its own tsconfig, `import ... from "tsq"`): the
 * plugin starts the worker with the server, a route enqueues, the job runs with the app's mailer, and
 * closing the server stops the worker (its process record leaves Redis).
 */
import { test, before, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { PROCESSES, processKey, queueKey } from "../../src/wire/keys.js";

const handle = useRedis();

interface ExampleApp extends FastifyInstance {
  mailer: { sent: { to: string; jid: string | undefined }[] };
  tsq: { worker: { identity: string; once(event: "stopped", listener: () => void): unknown } };
}
let buildApp: (options: { redis?: string }) => ExampleApp;

before(async () => {
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "examples/fastify")],
    { encoding: "utf8" },
  );
  assert.equal(tsc.status, 0, `examples/fastify does not compile: ${tsc.stdout}${tsc.stderr}`);
  // A path the root build does not follow: the example is compiled above, with its own settings.
  const entry = pathToFileURL(join(ROOT, "dist/examples/fastify/app.js")).href;
  ({ buildApp } = (await import(entry)) as { buildApp: typeof buildApp });
});

async function until(check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a route enqueues, the worker inside the app runs the job with the app's mailer, close stops it", async (t: TestContext) => {
  const app = buildApp({ redis: handle.url });
  t.after(() => app.close()); // a failed assertion must not leave the worker running
  await app.ready();
  assert.equal(await handle.redis.scard(PROCESSES), 1, "the worker registered when the server got ready");

  const emails = ["ada@example.com", "grace@example.com", "edsger@example.com"];
  const jids: string[] = [];
  for (const email of emails) {
    const response = await app.inject({ method: "POST", url: "/signups", payload: { email } });
    assert.equal(response.statusCode, 202, response.body);
    jids.push(response.json<{ jid: string }>().jid);
  }
  const bad = await app.inject({ method: "POST", url: "/signups", payload: { name: "no email" } });
  assert.equal(bad.statusCode, 400);

  await until(() => app.mailer.sent.length === emails.length);
  // Each job ran on its own instance: the jid it saw is the one its push returned.
  const sent = [...app.mailer.sent].sort((a, b) => a.to.localeCompare(b.to));
  const expected = emails.map((to, i) => ({ to, jid: jids[i] })).sort((a, b) => a.to.localeCompare(b.to));
  assert.deepEqual(sent, expected);

  const identity = app.tsq.worker.identity;
  assert.equal(await handle.redis.exists(processKey(identity)), 1);
  let stopped = false;
  app.tsq.worker.once("stopped", () => (stopped = true));
  await app.close();
  assert.ok(stopped, "the worker stopped before close resolved");
  assert.equal(await handle.redis.scard(PROCESSES), 0, "the worker left Redis when the server closed");
  assert.equal(await handle.redis.llen(queueKey("default")), 0);
});
