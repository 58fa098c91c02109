/**
 * The differential oracle for `/stats`: Ruby Sidekiq 6.4.1's own Web app (through Rack, with the
 * session it requires) and tsq's dashboard answer on the same Redis, field for field.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execa } from "execa";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { useRedis } from "../../helpers/redis.js";
import { seed, startWeb } from "./webHelpers.js";

const redis = useRedis();

const RUBY_STATS = `
require "sidekiq"
require "sidekiq/web"
require "rack"
require "rack/session/cookie"
Sidekiq.configure_client { |c| c.redis = { url: ENV.fetch("REDIS_URL") } }
app = Rack::Builder.new do
  use Rack::Session::Cookie, secret: "x" * 64, same_site: true
  run Sidekiq::Web
end
status, _headers, body = app.call(Rack::MockRequest.env_for("/stats"))
text = +""
body.each { |part| text << part }
abort "status #{status}: #{text}" unless status == 200
print text
`;

interface StatsJson {
  sidekiq: Record<string, number>;
  redis: Record<string, string>;
  server_utc_time: string;
}

test("/stats equals Sidekiq Web's /stats on the same Redis", async (t) => {
  if (!requireRubySidekiq(t)) return;
  await seed(redis.redis);
  const web = await startWeb({ redis: redis.redis });
  try {
    const ruby = await execa("ruby", ["-e", RUBY_STATS], { env: { REDIS_URL: redis.url }, timeout: 60_000 });
    const theirs = JSON.parse(String(ruby.stdout)) as StatsJson;
    const ours = (await (await fetch(`${web.url}/stats`)).json()) as StatsJson;
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
    assert.deepEqual(Object.keys(ours.sidekiq).sort(), Object.keys(theirs.sidekiq).sort());
    for (const [field, value] of Object.entries(theirs.sidekiq)) {
      // Latency is "now - enqueued_at", read at two different moments.
      if (field === "default_latency") assert.ok(Math.abs(ours.sidekiq[field]! - value) < 30, field);
      else assert.equal(ours.sidekiq[field], value, field);
    }
    assert.deepEqual(Object.keys(ours.redis).sort(), Object.keys(theirs.redis).sort());
    assert.equal(ours.redis.redis_version, theirs.redis.redis_version);
    assert.match(theirs.server_utc_time, /^\d\d:\d\d:\d\d UTC$/);
    assert.match(ours.server_utc_time, /^\d\d:\d\d:\d\d UTC$/);
  } finally {
    await web.stop();
  }
});
