/**
 * The dashboard's one Node handler mounted in Fastify, Koa and Hono (each handing over Node's own
 * request and response): pages and assets under the mount path, a CSRF-protected action that changes
 * Redis, a POST without the token refused, and the app's own routes untouched.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import Koa from "koa";
import { Hono } from "hono";
import { serve, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { RETRY } from "../../../src/wire/keys.js";
import { createWebHandler } from "../../../src/admin/web/index.js";
import { useRedis } from "../../helpers/redis.js";
import { WebSession, seed } from "./webHelpers.js";

const redis = useRedis();
const MOUNT = "/admin/jobs";

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

const mounted = (path: string) => path === MOUNT || path.startsWith(`${MOUNT}/`);

/** Walks one mounted dashboard: a page, an asset, a refused POST, an action, an app route. */
async function walk(base: string): Promise<void> {
  const s = new WebSession(base);
  const page = await s.get(`${MOUNT}/retries`);
  assert.equal(page.status, 200);
  assert.ok(page.body.includes(`href="${MOUNT}/retries/`), "entry links carry the mount path");
  assert.equal((await s.get(`${MOUNT}/assets/web.js`)).status, 200);
  const forged = await s.post(`${MOUNT}/retries/all/delete`, [["authenticity_token", "forged"]]);
  assert.equal(forged.status, 403, "a POST without the page's token is refused");
  assert.ok((await redis.redis.zcard(RETRY)) > 0);
  const token = await s.token(`${MOUNT}/retries`);
  const done = await s.post(`${MOUNT}/retries/all/delete`, [["authenticity_token", token]]);
  assert.equal(done.status, 303);
  assert.equal(done.location, `${MOUNT}/retries`);
  assert.equal(await redis.redis.zcard(RETRY), 0);
  assert.equal((await s.get("/hello")).body, "app route");
}

async function listen(t: TestContext, server: Server): Promise<string> {
  if (!server.listening) server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("Fastify: reply.hijack() and the raw request and response", async (t) => {
  await seed(redis.redis);
  const handler: NodeHandler = createWebHandler({ redis: redis.redis, prefix: MOUNT });
  const app = Fastify();
  // The dashboard reads its own form bodies: leave them unparsed for it.
  app.addContentTypeParser("application/x-www-form-urlencoded", (_request, _payload, done) => done(null));
  for (const url of [MOUNT, `${MOUNT}/*`]) {
    app.all(url, (request, reply) => {
      reply.hijack();
      handler(request.raw, reply.raw);
    });
  }
  app.get("/hello", () => "app route");
  await app.listen({ port: 0, host: "127.0.0.1" });
  t.after(() => app.close());
  await walk(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
});

test("Koa: ctx.respond = false and ctx.req / ctx.res", async (t) => {
  await seed(redis.redis);
  const handler: NodeHandler = createWebHandler({ redis: redis.redis, prefix: MOUNT });
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (!mounted(ctx.path)) return next();
    ctx.respond = false;
    await new Promise<void>((resolve) => {
      ctx.res.once("close", () => resolve());
      handler(ctx.req, ctx.res);
    });
  });
  app.use((ctx) => {
    if (ctx.path === "/hello") ctx.body = "app route";
  });
  await walk(await listen(t, createServer(app.callback())));
});

test("Hono on @hono/node-server: the incoming and outgoing bindings", async (t) => {
  await seed(redis.redis);
  const handler: NodeHandler = createWebHandler({ redis: redis.redis, prefix: MOUNT });
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.get("/hello", (c) => c.text("app route"));
  app.all(`${MOUNT}/*`, (c) => {
    handler(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  await walk(await listen(t, server));
});

test("Fastify with a form parser of its own: the parsed body handed over on the raw request", async (t) => {
  await seed(redis.redis);
  const handler: NodeHandler = createWebHandler({ redis: redis.redis, prefix: MOUNT });
  const app = Fastify();
  // As @fastify/formbody does: the app reads and parses every form, so the raw stream is empty after.
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );
  for (const url of [MOUNT, `${MOUNT}/*`]) {
    app.all(url, (request, reply) => {
      reply.hijack();
      // Without this line the dashboard cannot see the form, and says so (400), changing nothing.
      if (request.headers["x-hand-over"] !== "no") Object.assign(request.raw, { body: request.body });
      handler(request.raw, reply.raw);
    });
  }
  app.get("/hello", () => "app route");
  await app.listen({ port: 0, host: "127.0.0.1" });
  t.after(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const s = new WebSession(base);
  const token = await s.token(`${MOUNT}/retries`);
  const lost = await s.post(`${MOUNT}/retries/all/delete`, [["authenticity_token", token]], {
    "sec-fetch-site": "same-origin",
    "x-hand-over": "no",
  });
  assert.equal(lost.status, 400);
  assert.match(lost.body, /already read by the app/);
  assert.ok((await redis.redis.zcard(RETRY)) > 0, "nothing changed");
  await walk(base);
});
