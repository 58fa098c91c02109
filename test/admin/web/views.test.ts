/**
 * The dashboard's `/views`: the plug-ins' status views (tsqctl's `limits`, `ratelimits`) as pages, read
 * from Redis; a class name from Redis holding markup is shown escaped; an unknown view is a 404.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { LIMITS } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { HOSTILE, WebSession, startWeb } from "./webHelpers.js";

const redis = useRedis();

test("the plug-ins' views are pages: listed, read from Redis, escaped; an unknown one is a 404", async () => {
  const web = await startWeb({ redis: redis.redis });
  after(() => web.stop());
  const session = new WebSession(web.url);
  const list = await session.get("/views");
  assert.equal(list.status, 200);
  assert.match(list.body, /href="\/views\/limits">limits<\/a>/);
  assert.match(list.body, /href="\/views\/ratelimits">ratelimits<\/a>/);

  assert.match((await session.get("/views/limits")).body, /no concurrency-limited class has run yet/);
  await redis.redis.hset(LIMITS, "ReportJob", "3", HOSTILE[0]!, "1");
  const limits = (await session.get("/views/limits")).body;
  assert.match(limits, /ReportJob\s+3\s+0\s+0/);
  assert.ok(!limits.includes(HOSTILE[0]!), "markup from Redis is escaped");
  assert.ok(limits.includes("&lt;script&gt;"));
  assert.equal((await session.get("/views/nope")).status, 404);
  const hostile = await session.get(`/views/${encodeURIComponent(HOSTILE[0]!)}`);
  assert.equal(hostile.status, 404);
  assert.ok(!hostile.body.includes(HOSTILE[0]!), "a view name from the URL is escaped in the 404");
});
