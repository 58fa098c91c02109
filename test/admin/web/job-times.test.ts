/**
 * A job's page shows its times (`created_at`, `enqueued_at`, `failed_at`, `retried_at`, `at`, ...) as
 * ISO 8601 UTC with "n min ago"/"in n s" beside them and the stored value in the title, whichever
 * format the job was written in (Sidekiq 7's float seconds, Sidekiq 8's integer milliseconds). A time
 * field holding hostile text is shown escaped, as it is.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { RETRY } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { HOSTILE, WebSession, startWeb } from "./webHelpers.js";

const redis = useRedis();

test("job page: times as ISO UTC with a relative time and the raw value in the title", async () => {
  const web = await startWeb({ redis: redis.redis });
  after(() => web.stop());
  const score = "1795264767.5";
  await redis.redis.zadd(
    RETRY,
    score,
    JSON.stringify({
      class: "TimeJob",
      args: [1],
      jid: "a1b2c3d4e5f6a1b2c3d4e5f6",
      queue: "default",
      created_at: 1795264707355, // Sidekiq 8: integer milliseconds
      enqueued_at: 1795264707.355663, // Sidekiq 7: float seconds
      failed_at: 1795264737.25,
      retried_at: HOSTILE[0],
      at: "1795264767.5",
      error_class: "Boom",
      error_message: "x",
    }),
  );
  const s = new WebSession(web.url);
  const page = await s.get(`/retries/${score}-a1b2c3d4e5f6a1b2c3d4e5f6`);
  assert.equal(page.status, 200, page.body.slice(0, 300));
  const row = (field: string) => {
    const m = new RegExp(`<th>${field}</th>\\s*<td>([\\s\\S]*?)</td>`).exec(page.body);
    assert.ok(m, `a row for ${field}`);
    return m[1]!;
  };
  const created = row("created_at");
  assert.match(created, /2026-11-21 12:38:27 UTC/, "milliseconds shown as an ISO time");
  assert.match(created, /title="1795264707355"/, "the stored value in the title");
  assert.match(created, /datetime="2026-11-21T12:38:27\.355Z"/);
  assert.match(created, /\d+ (s|min|h|d) ago/, "a relative time beside it");
  assert.doesNotMatch(created, /<pre>1795264707355<\/pre>/, "not the raw number alone");
  const enqueued = row("enqueued_at");
  assert.match(enqueued, /2026-11-21 12:38:27 UTC/);
  assert.match(enqueued, /title="1795264707.355663"/);
  assert.match(row("failed_at"), /2026-11-21 12:38:57 UTC/);
  assert.match(row("at"), /2026-11-21 12:39:27 UTC/, "a numeric string is a time too");
  const hostile = row("retried_at");
  assert.ok(!hostile.includes("<script>"), "hostile text is escaped");
  assert.match(hostile, /&lt;script&gt;/);
  assert.doesNotMatch(hostile, /UTC/, "text that is not a time is shown as it is");
  assert.ok(!page.body.includes(HOSTILE[0]!), "no unescaped hostile text anywhere");
});
