/** MetricsServer: routes, methods and failures of the HTTP endpoints, with stand-in endpoints. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { pino } from "pino";
import { MetricsServer, type Endpoints } from "../../src/metrics/MetricsServer.js";
import { freePort } from "../helpers/redis.js";
import { request } from "./http.js";

const silent = pino({ level: "silent" });

async function serve(t: { after(fn: () => Promise<void>): void }, endpoints: Endpoints): Promise<number> {
  const server = new MetricsServer(endpoints, { port: await freePort(), host: "127.0.0.1", logger: silent });
  const port = await server.start();
  assert.ok(port);
  t.after(() => server.stop());
  return port;
}

test("GET /metrics, /healthz, /readyz; HEAD; anything else 404; other methods 405", async (t) => {
  const state = { healthy: true, ready: false };
  const port = await serve(t, {
    metrics: async () => "# HELP x_total x\n# TYPE x_total counter\nx_total 1\n",
    healthy: async () => state.healthy,
    ready: () => state.ready,
  });
  const metrics = await request(port, "/metrics?name[]=x");
  assert.equal(metrics.status, 200);
  assert.equal(metrics.contentType, "text/plain; version=0.0.4; charset=utf-8");
  assert.match(metrics.body, /^x_total 1$/m);
  const head = await request(port, "/metrics", "HEAD");
  assert.deepEqual([head.status, head.body], [200, ""]);

  assert.equal((await request(port, "/healthz")).status, 200);
  assert.equal((await request(port, "/readyz")).status, 503);
  state.ready = true;
  state.healthy = false;
  assert.equal((await request(port, "/readyz")).status, 200);
  assert.equal((await request(port, "/healthz")).status, 503);

  for (const path of ["/", "/metrics/", "/favicon.ico", "/healthz/x"])
    assert.equal((await request(port, path)).status, 404, path);
  const post = await fetch(`http://127.0.0.1:${port}/metrics`, { method: "POST" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
  await post.text();
});

test("a failing collector is a 500, and the server keeps serving", async (t) => {
  let fail = true;
  const port = await serve(t, {
    metrics: async () => {
      if (fail) throw new Error("boom");
      return "";
    },
    healthy: async () => true,
    ready: () => true,
  });
  assert.equal((await request(port, "/metrics")).status, 500);
  fail = false;
  assert.equal((await request(port, "/metrics")).status, 200);
});

test("a port in use is logged and start() resolves undefined; the caller runs on without metrics", async () => {
  const blocker = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
  const logged: string[] = [];
  const logger = pino({ level: "error" }, { write: (line: string) => void logged.push(line) });
  try {
    const server = new MetricsServer(
      { metrics: async () => "", healthy: async () => true, ready: () => true },
      { port, host: "127.0.0.1", logger },
    );
    assert.equal(await server.start(), undefined);
    await server.stop();
    assert.match(logged.join(""), /EADDRINUSE/);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

test("stop() closes kept-alive scrape connections at once", async () => {
  const server = new MetricsServer(
    { metrics: async () => "", healthy: async () => true, ready: () => true },
    { port: await freePort(), host: "127.0.0.1", logger: silent },
  );
  const port = (await server.start())!;
  assert.equal((await request(port, "/healthz")).status, 200); // fetch keeps the connection alive
  const started = performance.now();
  await server.stop();
  await server.stop(); // idempotent
  assert.ok(performance.now() - started < 1000);
});
