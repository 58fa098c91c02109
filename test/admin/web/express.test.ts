/**
 * The handler mounted in Express (`app.use("/admin/jobs", handler)`): Express strips the mount path
 * from `req.url`, so links must come from `req.baseUrl`; pages, actions with CSRF, and `next()` for the
 * app's other routes all work.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import express from "express";
import { DEAD, RETRY } from "../../../src/wire/keys.js";
import { createWebHandler } from "../../../src/admin/web/index.js";
import { useRedis } from "../../helpers/redis.js";
import { WebSession, seed } from "./webHelpers.js";

const redis = useRedis();

test("mounted under a path in Express: pages, links, an action and the app's own routes", async () => {
  await seed(redis.redis);
  const app = express();
  app.use("/admin/jobs", createWebHandler({ redis: redis.redis }));
  app.get("/hello", (_req, res) => void res.send("app route"));
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const s = new WebSession(base);
    const page = await s.get("/admin/jobs/retries");
    assert.equal(page.status, 200);
    assert.ok(page.body.includes('href="/admin/jobs/retries/'), "entry links carry the mount path");
    assert.ok(page.body.includes('src="/admin/jobs/assets/web.js"'));
    assert.equal((await s.get("/admin/jobs/assets/web.js")).status, 200);
    const token = await s.token("/admin/jobs/retries");
    const done = await s.post("/admin/jobs/retries/all/delete", [["authenticity_token", token]]);
    assert.equal(done.status, 303);
    assert.equal(done.location, "/admin/jobs/retries");
    assert.equal(await redis.redis.zcard(RETRY), 0);
    assert.equal((await s.get("/hello")).body, "app route");
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test("behind express.urlencoded(): the token is read from the body Express already parsed", async () => {
  await seed(redis.redis);
  const app = express();
  // The app parses every form before any route: the request stream is empty when the dashboard sees it.
  app.use(express.urlencoded());
  app.use("/admin/jobs", createWebHandler({ redis: redis.redis }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const s = new WebSession(base);
    const [text, score] = await redis.redis.zrange(DEAD, 0, 0, "WITHSCORES");
    const jid = (JSON.parse(text!) as { jid: string }).jid;
    const entry = `/admin/jobs/morgue/${score}-${jid}`;
    const before = await redis.redis.zcard(DEAD);

    const refused = await s.post(entry, [["delete", "1"]]);
    assert.equal(refused.status, 403, "no token: refused");
    assert.match(refused.body, /missing CSRF token/);
    assert.equal(await redis.redis.zcard(DEAD), before, "nothing changed");

    const token = await s.token(entry);
    const done = await s.post(entry, [
      ["authenticity_token", token],
      ["delete", "1"],
    ]);
    assert.equal(done.status, 303, done.body);
    assert.equal(done.location, "/admin/jobs/morgue");
    assert.equal(await redis.redis.zcard(DEAD), before - 1, "the dead job is deleted");
    assert.equal(await redis.redis.zscore(DEAD, text!), null);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
