/**
 * The dashboard on a sharded Redis: the default shard at the root, every other one under
 * `/shards/<name>/`, a switcher on every page, actions landing on the shard shown; and `tsqctl web`
 * serving every shard of the config's `shards:`.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { Client } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";
import { ROOT, eventually } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { HOSTILE, WebSession, startWeb } from "./webHelpers.js";

const one = useRedis();
const two = useRedis();

async function pushTo(url: string, queue: string, n: number): Promise<void> {
  const client = new Client({ redis: url });
  for (let i = 0; i < n; i++) await client.push({ class: "ShardJob", args: [i], queue });
  await client.close();
}

test("each shard's pages under /shards/<name>/, a switcher on every page, actions on the shard shown", async () => {
  await pushTo(one.url, "a", 2);
  await pushTo(two.url, "b", 3);
  const web = await startWeb({ redis: one.redis, shards: [{ name: "bulk", redis: two.redis }], prefix: "/tsq" });
  after(() => web.stop());
  const session = new WebSession(`${web.url}/tsq`);

  const root = await session.get("/queues");
  assert.equal(root.status, 200);
  assert.match(root.body, /href="\/tsq\/queues\/a"/, "the default shard's queue at the root");
  assert.doesNotMatch(root.body, /queues\/b"/);
  assert.match(root.body, /id="shards"/, "a shard switcher");
  assert.match(root.body, /href="\/tsq\/shards\/bulk\/"/);

  const other = await session.get("/shards/bulk/queues");
  assert.equal(other.status, 200);
  assert.match(other.body, /href="\/tsq\/shards\/bulk\/queues\/b"/, "links stay on the shard");
  assert.doesNotMatch(other.body, /queues\/a"/);
  assert.match(other.body, /<title>Queues · bulk · tsq<\/title>/);
  assert.match(other.body, /class="tab active" href="\/tsq\/shards\/bulk\/">bulk</);
  const stats = (await (await fetch(`${web.url}/tsq/shards/bulk/stats`)).json()) as { sidekiq: { enqueued: number } };
  assert.equal(stats.sidekiq.enqueued, 3, "/stats of the shard");
  assert.equal((await session.get("/shards/bulk/assets/web.js")).status, 200);

  // An action on the shard's page lands in that shard's Redis, with the CSRF token of the one cookie.
  const token = await session.token("/shards/bulk/queues/b");
  const [job] = await two.redis.lrange("queue:b", 0, 0);
  const done = await session.post("/shards/bulk/queues/b/delete", [
    ["authenticity_token", token],
    ["key_val", job!],
  ]);
  assert.equal(done.status, 303);
  assert.equal(done.location, "/tsq/shards/bulk/queues/b");
  assert.equal(await two.redis.llen("queue:b"), 2, "deleted on shard bulk");
  assert.equal(await one.redis.llen("queue:a"), 2, "the default shard untouched");
  // A cross-site POST to a shard is refused like any other.
  const forged = await session.post("/shards/bulk/queues/b/delete", [["key_val", job!]], {
    "sec-fetch-site": "cross-site",
  });
  assert.equal(forged.status, 403);

  const unknown = await session.get(`/shards/${encodeURIComponent(HOSTILE[0]!)}/queues`);
  assert.equal(unknown.status, 404);
  assert.ok(!unknown.body.includes(HOSTILE[0]!), "the unknown name is shown as text");
  assert.equal((await session.get("/shards/%E0%A4%A/queues")).status, 404, "bad percent-encoding: 404, not 500");
});

test("without shards there is no switcher", async () => {
  const web = await startWeb({ redis: one.redis });
  after(() => web.stop());
  const page = await new WebSession(web.url).get("/queues");
  assert.doesNotMatch(page.body, /id="shards"/);
  assert.equal((await new WebSession(web.url).get("/shards/bulk/queues")).status, 404);
});

test("tsqctl web serves every shard of the config's shards:", async () => {
  await pushTo(two.url, "b", 1);
  const dir = scratchDir("tsq-web-shards-");
  writeFileSync(
    join(dir, "tsq.yml"),
    `redis_url: ${one.url}\nshards:\n  bulk:\n    url: ${two.url}\n    queues: [b]\n`,
  );
  const child = execa(
    process.execPath,
    [join(ROOT, "bin/tsqctl.js"), "-C", join(dir, "tsq.yml"), "web", "--port", "0"],
    {
      reject: false,
    },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  try {
    const url = await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`tsqctl web exited ${child.exitCode}: ${err}`);
        return /on (http:\/\/\S+) /.exec(out)?.[1];
      },
      20_000,
      "the address line",
    );
    assert.match(out, /shards default, bulk/);
    const page = await (await fetch(`${url}shards/bulk/queues`)).text();
    assert.match(page, /href="\/shards\/bulk\/queues\/b"/);
  } finally {
    child.kill("SIGTERM");
  }
  const result = await child;
  assert.equal(result.exitCode, 0, String(result.stderr));
});
