/**
 * The dashboard's Busy page shows a running iterable job's progress from it-<jid> (cursor, executions,
 * runtime), as Sidekiq's does, with the stored cursor escaped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { HOSTILE_TEXT, WebSession, addProcess, jidOf, startWeb } from "../../admin/web/webHelpers.js";

const handle = useRedis();

test("Busy shows cursor, exec and rt of a running iterable job, escaped", async (t) => {
  await addProcess(handle.redis, "host:1:abcdef012345", "app");
  const jid = jidOf("w", 0);
  await handle.redis.hset(`it-${jid}`, { ex: "3", c: JSON.stringify({ id: 412500, note: HOSTILE_TEXT }), rt: "7.25" });
  const web = await startWeb({ redis: handle.redis });
  t.after(() => web.stop());
  const body = (await new WebSession(web.url).get("/busy")).body;
  assert.match(body, /cursor=\{&quot;id&quot;:412500,&quot;note&quot;:&quot;&lt;script&gt;/);
  assert.match(body, /exec=3; rt=7\.250s/);
  assert.ok(!body.includes("<script>window.__xss"), "the cursor is shown as text");

  await handle.redis.hset(`it-${jid}`, "cancelled", "1795434002");
  assert.match((await new WebSession(web.url).get("/busy")).body, /rt=7\.250s; cancelled/);
});
