/**
 * The dashboard's request handler over node:http, without a browser: every page against a real Redis
 * holding hostile text, /stats in Sidekiq's shape, the actions' effect on Redis, CSRF, read-only mode,
 * authentication, the mount prefix, the live stream and paging.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEAD, LIMITS, QUEUES, RETRY, SCHEDULE, limitSlotsKey, queueKey, signalsKey } from "../../../src/wire/keys.js";
import { setSwitch } from "../../../src/features/flow/kill-switches/switches.js";
import { useRedis } from "../../helpers/redis.js";
import { HOSTILE, WebSession, addProcess, jidOf, seed, startWeb, type WebHandle } from "./webHelpers.js";

const redis = useRedis();

async function withWeb<T>(
  options: Partial<Parameters<typeof startWeb>[0]>,
  work: (web: WebHandle) => Promise<T>,
): Promise<T> {
  const web = await startWeb({ redis: redis.redis, ...options });
  try {
    return await work(web);
  } finally {
    await web.stop();
  }
}

const PAGES = [
  "/",
  "/busy",
  "/queues",
  "/queues/default",
  "/queues/critical",
  "/retries",
  "/scheduled",
  "/morgue",
  "/failures",
  "/search?q=FailJob",
  "/metrics",
  "/cron",
];

test("every page renders hostile Redis text escaped, with a fresh CSP nonce and no inline handlers", async () => {
  await seed(redis.redis);
  await withWeb({}, async (web) => {
    const session = new WebSession(web.url);
    const entryPages = ["/retries", "/morgue", "/scheduled"];
    const links: string[] = [];
    for (const list of entryPages) {
      const { body } = await session.get(list);
      const link = new RegExp(`href="(${list}/[0-9][^"]*)"`).exec(body)?.[1];
      assert.ok(link, `a link to an entry on ${list}`);
      links.push(link);
    }
    const nonces = new Set<string>();
    for (const path of [...PAGES, ...links]) {
      const { status, body, res } = await session.get(path);
      assert.equal(status, 200, `${path}: ${body.slice(0, 200)}`);
      for (const bad of HOSTILE.slice(0, 2)) assert.ok(!body.includes(bad), `${path} shows ${bad} unescaped`);
      // Escaped text never holds "<" or a raw quote, so every "<tag ...>" found is the page's own markup and
      // every quoted value is one attribute.
      for (const tag of body.match(/<[a-z][^>]*>/gi) ?? [])
        assert.ok(!/\son[a-z]+\s*=/i.test(tag.replace(/"[^"]*"/g, '""')), `${path}: ${tag}`);
      assert.ok(!/href="javascript:/i.test(body), `${path} links to javascript:`);
      const csp = res.headers.get("content-security-policy") ?? "";
      const nonce = /script-src 'self' 'nonce-([^']+)'/.exec(csp)?.[1];
      assert.ok(nonce, `${path} CSP: ${csp}`);
      assert.ok(csp.includes("default-src 'none'") && !csp.includes("unsafe-inline"), csp);
      for (const tag of body.match(/<script[^>]*>/g) ?? [])
        assert.ok(tag.includes(`nonce="${nonce}"`), `${path}: ${tag}`);
      nonces.add(nonce);
    }
    assert.equal(nonces.size, PAGES.length + links.length, "one nonce per response");
    const retries = (await session.get("/retries")).body;
    assert.ok(retries.includes("&lt;script&gt;window.__xss=1&lt;/script&gt;"), "the hostile text is shown as text");
    const busy = (await session.get("/busy")).body;
    assert.ok(
      busy.includes("&quot;&gt;&lt;img src=x onerror=&quot;window.__xss=2&quot;&gt;"),
      "the process tag is shown as text",
    );
    assert.ok(busy.includes(jidOf("w", 0)), "the running job is listed");
  });
});

test("/stats has Sidekiq Web's shape and numbers; /stats/queues sizes each queue", async () => {
  await seed(redis.redis);
  await withWeb({}, async (web) => {
    const stats = (await (await fetch(`${web.url}/stats`)).json()) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(stats).sort(), ["redis", "server_utc_time", "sidekiq"]);
    const { default_latency: latency, ...rest } = stats.sidekiq!;
    assert.deepEqual(rest, {
      processed: 1234,
      failed: 56,
      busy: 1,
      processes: 1,
      enqueued: 31,
      scheduled: 3,
      retries: 6,
      dead: 4,
    });
    assert.equal(typeof latency, "number");
    assert.deepEqual(Object.keys(stats.redis!).sort(), [
      "connected_clients",
      "redis_version",
      "uptime_in_days",
      "used_memory_human",
      "used_memory_peak_human",
    ]);
    assert.match(stats.server_utc_time as unknown as string, /^\d\d:\d\d:\d\d UTC$/);
    assert.deepEqual(await (await fetch(`${web.url}/stats/queues`)).json(), { default: 30, critical: 1 });
  });
});

test("actions change Redis: retry all, delete one queue job, kill one, bulk delete, quiet a process, pause, unpause and clear a queue, retry a failure group", async () => {
  await seed(redis.redis);
  await withWeb({}, async (web) => {
    const s = new WebSession(web.url);
    const token = await s.token();
    const auth: [string, string] = ["authenticity_token", token];
    // Kill one retry from its own page.
    const [first] = await redis.redis.zrevrange(RETRY, 0, 0, "WITHSCORES");
    const firstJid = (JSON.parse(first!) as { jid: string }).jid;
    const score = Number(await redis.redis.zscore(RETRY, first!));
    let r = await s.post(`/retries/${score}-${firstJid}`, [auth, ["kill", "1"]]);
    assert.equal(r.status, 303, r.body);
    assert.equal(await redis.redis.zcard(RETRY), 5);
    assert.ok(
      (await redis.redis.zrange(DEAD, 0, -1)).some((t) => t.includes(firstJid)),
      "killed into the dead set",
    );
    // Bulk delete two dead entries by key.
    const dead = await redis.redis.zrange(DEAD, 0, 1, "WITHSCORES");
    const keys = [0, 2].map((i) => `${Number(dead[i + 1])}-${(JSON.parse(dead[i]!) as { jid: string }).jid}`);
    r = await s.post("/morgue", [auth, ["key", keys[0]!], ["key", keys[1]!], ["delete", "1"]]);
    assert.equal(r.status, 303);
    assert.equal(await redis.redis.zcard(DEAD), 3);
    // Retry all: every retry goes back to its queue.
    r = await s.post("/retries/all/retry", [auth]);
    assert.equal(r.status, 303);
    assert.equal(await redis.redis.zcard(RETRY), 0);
    assert.equal(await redis.redis.llen(queueKey("default")), 35);
    // Delete one queue job by its exact text.
    const [job] = await redis.redis.lrange(queueKey("default"), 0, 0);
    r = await s.post("/queues/default/delete", [auth, ["key_val", job!]]);
    assert.equal(r.status, 303);
    assert.equal(await redis.redis.llen(queueKey("default")), 34);
    // Quiet one process: TSTP in its signals list.
    r = await s.post("/busy", [auth, ["identity", "web-host:4242:abcdef012345"], ["quiet", "1"]]);
    assert.equal(r.status, 303);
    assert.deepEqual(await redis.redis.lrange(signalsKey("web-host:4242:abcdef012345"), 0, -1), ["TSTP"]);
    // Pause a queue: into the `paused` set, flagged on /queues; unpause takes it out. Nothing is cleared.
    r = await s.post("/queues/critical", [auth, ["pause", "1"]]);
    assert.equal(r.status, 303);
    assert.deepEqual(await redis.redis.smembers("paused"), ["critical"]);
    assert.match(
      (await s.get("/queues")).body,
      /critical<\/a\s*>[^<]*(<span[^>]*>no consumer<\/span>)?\s*<span class="badge warn"[^>]*>paused</,
    );
    const why = (await s.get("/queues/critical")).body;
    assert.match(why, /<details class="why" open>/, "the reasons are open when there are some");
    assert.match(why, /The queue is <strong>paused<\/strong>/);
    r = await s.post("/queues/critical", [auth, ["unpause", "1"]]);
    assert.equal(r.status, 303);
    assert.deepEqual(await redis.redis.smembers("paused"), []);
    assert.equal(await redis.redis.llen(queueKey("critical")), 1, "pausing cleared nothing");
    // Clear a queue.
    r = await s.post("/queues/critical", [auth, ["delete", "1"]]);
    assert.equal(r.status, 303);
    assert.equal(await redis.redis.exists(queueKey("critical")), 0);
    assert.equal(await redis.redis.sismember(QUEUES, "critical"), 0);
    // Retry one failure group from the dead set (Timeout entries: d1, d3 minus those deleted above).
    const groups = (await s.get("/failures")).body;
    const sig = /name="signature" value="(Timeout: [^"]+)"/.exec(groups)?.[1];
    assert.ok(sig, "a Timeout group is listed");
    const before = await redis.redis.zcard(DEAD);
    r = await s.post("/failures", [
      auth,
      ["set", "morgue"],
      [
        "signature",
        sig
          .replaceAll("&lt;", "<")
          .replaceAll("&gt;", ">")
          .replaceAll("&quot;", '"')
          .replaceAll("&#39;", "'")
          .replaceAll("&amp;", "&"),
      ],
      ["retry", "1"],
    ]);
    assert.equal(r.status, 303);
    assert.ok((await redis.redis.zcard(DEAD)) < before, "the group left the dead set");
    assert.ok(
      (await redis.redis.zrange(DEAD, 0, -1)).every((t) => !t.includes('"Timeout"')),
      "no Timeout entry is left",
    );
  });
});

test("CSRF: a POST without the token, with a wrong one, or from another site is refused and changes nothing", async () => {
  await seed(redis.redis);
  await withWeb({}, async (web) => {
    const s = new WebSession(web.url);
    const token = await s.token();
    const refused = [
      await s.post("/retries/all/delete", []),
      await s.post("/retries/all/delete", [["authenticity_token", "0".repeat(64)]]),
      await s.post("/retries/all/delete", [["authenticity_token", token]], { "sec-fetch-site": "cross-site" }),
      await s.post("/retries/all/delete", [["authenticity_token", token]], { "sec-fetch-site": "same-site" }),
      await new WebSession(web.url).post("/retries/all/delete", [["authenticity_token", token]]),
    ];
    for (const r of refused) assert.equal(r.status, 403, r.body);
    assert.equal(await redis.redis.zcard(RETRY), 6);
    assert.equal((await s.post("/retries/all/delete", [["authenticity_token", token]])).status, 303);
    assert.equal(await redis.redis.zcard(RETRY), 0);
  });
});

test("read-only mode refuses every action and shows no forms", async () => {
  await seed(redis.redis);
  await withWeb({ readOnly: true }, async (web) => {
    const s = new WebSession(web.url);
    for (const path of PAGES) assert.ok(!(await s.get(path)).body.includes('method="post"'), `${path} shows a form`);
    const cookieSession = new WebSession(web.url);
    await cookieSession.get("/");
    for (const path of [
      "/retries/all/delete",
      "/morgue/all/retry",
      "/busy",
      "/queues/default",
      "/queues/default/delete",
      "/failures",
      "/scheduled",
      "/search",
    ]) {
      const r = await cookieSession.post(path, [
        ["stop", "1"],
        ["delete", "1"],
      ]);
      assert.equal(r.status, 403, path);
    }
    assert.equal(await redis.redis.zcard(RETRY), 6);
    assert.equal(await redis.redis.llen(queueKey("default")), 30);
    assert.equal(await redis.redis.llen(signalsKey("web-host:4242:abcdef012345")), 0);
  });
});

test("with Basic auth on, every page, action, stream and asset is refused without credentials; the secret is never echoed", async () => {
  await seed(redis.redis);
  const password = "s3cret-dashboard-pw";
  await withWeb({ auth: { username: "ops", password, token: "bearer-token-123456" } }, async (web) => {
    const anonymous = new WebSession(web.url);
    for (const path of [...PAGES, "/stats", "/stats/queues", "/stream", "/assets/web.js", "/retries/1-x"]) {
      const r = await anonymous.get(path);
      assert.equal(r.status, 401, path);
      assert.match(r.res.headers.get("www-authenticate") ?? "", /^Basic /);
    }
    assert.equal((await anonymous.post("/retries/all/delete", [])).status, 401);
    const wrong = new WebSession(web.url, {
      authorization: `Basic ${Buffer.from(`ops:${password}x`).toString("base64")}`,
    });
    assert.equal((await wrong.get("/")).status, 401);
    const basic = new WebSession(web.url, {
      authorization: `Basic ${Buffer.from(`ops:${password}`).toString("base64")}`,
    });
    const page = await basic.get("/");
    assert.equal(page.status, 200);
    assert.ok(!page.body.includes(password));
    const bearer = new WebSession(web.url, { authorization: "Bearer bearer-token-123456" });
    assert.equal((await bearer.get("/stats")).status, 200);
    const token = await basic.token();
    assert.equal((await basic.post("/retries/all/delete", [["authenticity_token", token]])).status, 303);
    assert.equal(await redis.redis.zcard(RETRY), 0);
  });
});

test("queue and set pages read one page at a time, newest or oldest first; bad input is a 4xx", async () => {
  const client = (await import("../../../src/client/Client.js")).Client;
  const c = new client({ redis: redis.redis });
  for (let i = 0; i < 120; i++) await c.push({ class: "PageJob", args: [i], queue: "default", jid: jidOf("p", i) });
  const now = Date.now() / 1000;
  for (let i = 0; i < 60; i++)
    await redis.redis.zadd(
      SCHEDULE,
      now + 100 + i,
      JSON.stringify({ class: "S", args: [i], jid: jidOf("s", i), queue: "default" }),
    );
  await withWeb({}, async (web) => {
    const s = new WebSession(web.url);
    const page2 = (await s.get("/queues/default?page=2&count=50")).body;
    assert.ok(page2.includes(jidOf("p", 69)) && page2.includes(jidOf("p", 20)), "page 2 holds jobs 69..20");
    assert.ok(!page2.includes(jidOf("p", 70)) && !page2.includes(jidOf("p", 19)));
    assert.match(page2, /Page 2 of 3 \(120 total\)/);
    const oldest = (await s.get("/queues/default?direction=asc&count=10")).body;
    assert.ok(oldest.includes(jidOf("p", 0)) && !oldest.includes(jidOf("p", 10)));
    const sched = (await s.get("/scheduled?page=3&count=25")).body;
    assert.ok(sched.includes(jidOf("s", 9)) && !sched.includes(jidOf("s", 10)), "newest first, the third page of 25");
    const exportedPage = (await (await fetch(`${web.url}/scheduled/export?page=2&count=10`)).json()) as {
      score: number;
      payload: { jid: string };
    }[];
    assert.deepEqual(
      exportedPage.map((e) => e.payload.jid),
      Array.from({ length: 10 }, (_, i) => jidOf("s", 49 - i)),
      "the second page of 10, newest first",
    );
    const key = `${exportedPage[0]!.score}-${jidOf("s", 49)}`;
    assert.ok((await s.get("/scheduled")).body.includes('href="/scheduled/export?page=1&amp;count=25"'));
    assert.ok((await s.get(`/scheduled/${key}`)).body.includes(`href="/scheduled/${key}/json"`));
    const raw = (await (await fetch(`${web.url}/scheduled/${key}/json`)).json()) as { payload: { args: number[] } };
    assert.deepEqual(raw.payload.args, [49]);
    assert.equal((await s.get("/dashboard/stats")).res.headers.get("location"), "/stats");
    assert.equal((await s.get("/queues/bad%20name")).status, 404);
    assert.equal((await s.get("/?days=999")).status, 400);
    assert.equal((await s.get("/retries/123-nope")).status, 404);
    assert.equal((await s.get("/nothing-here")).status, 404);
  });
});

test("search finds a text across queues and sets and says when it stopped early", async () => {
  await seed(redis.redis);
  await withWeb({}, async (web) => {
    const s = new WebSession(web.url);
    const all = (await s.get(`/search?q=${encodeURIComponent("window.__xss=1")}`)).body;
    for (const where of ["Retries", "Dead", "queue default", "queue critical", "running on"])
      assert.ok(all.includes(where), where);
    const one = (await s.get(`/search?q=${jidOf("r", 3)}`)).body;
    assert.match(one, /id="search-summary">1 result</);
    // Bulk retry on a result: the checked retry is pushed; hostile keys are skipped, not a 500.
    const token = await s.token();
    const key = /name="key" value="(retries:[^"]+)"/.exec(one)?.[1];
    assert.ok(key, "the result can be selected");
    const r = await s.post(`/search?q=${jidOf("r", 3)}`, [
      ["authenticity_token", token],
      ["key", key],
      ["key", "constructor:1-x"],
      ["key", "__proto__:1-x"],
      ["retry", "1"],
    ]);
    assert.equal(r.status, 303, r.body);
    assert.equal(await redis.redis.zscore(RETRY, "x"), null);
    assert.ok(!(await redis.redis.zrange(RETRY, 0, -1)).some((t) => t.includes(jidOf("r", 3))), "left the retry set");
    assert.ok(
      (await redis.redis.lrange(queueKey("default"), 0, -1)).some((t) => t.includes(jidOf("r", 3))),
      "back in its queue",
    );
    const capped = (await s.get("/search?q=HardJob&cap=5")).body;
    assert.match(capped, /partial: stopped after 5 queued jobs/);
  });
});

test("the live stream pushes /stats as server-sent events; the prefix mounts the dashboard and passes other paths on", async () => {
  await seed(redis.redis);
  await withWeb({ prefix: "/tsq" }, async (web) => {
    const controller = new AbortController();
    const res = await fetch(`${web.url}/tsq/stream?interval=2`, { signal: controller.signal });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    const text = Buffer.from(value).toString();
    assert.match(text, /^event: stats\ndata: \{"sidekiq":\{"processed":1234,/);
    controller.abort();
    const page = await (await fetch(`${web.url}/tsq/retries`)).text();
    assert.ok(
      page.includes('href="/tsq/retries/') && page.includes('src="/tsq/assets/web.js"'),
      "links carry the prefix",
    );
    assert.equal((await fetch(`${web.url}/elsewhere`)).status, 418, "paths outside the prefix go to next()");
    assert.equal((await fetch(`${web.url}/tsq/assets/web.css`)).headers.get("content-type"), "text/css; charset=utf-8");
  });
});

test("a queue page says why its jobs wait: no consumer, a kill switch, a full concurrency limit", async () => {
  await redis.redis.flushdb();
  const now = Date.now() / 1000;
  for (const klass of ["Stuck", "Capped", "Free"])
    await redis.redis.lpush(
      queueKey("lonely"),
      JSON.stringify({ class: klass, args: [], jid: `${klass}-1`, queue: "lonely", enqueued_at: now }),
    );
  await redis.redis.sadd(QUEUES, "lonely");
  await setSwitch(redis.redis, "Stuck", { action: "defer", delay: 60 });
  await redis.redis.hset(LIMITS, "Capped", "1");
  await redis.redis.hset(limitSlotsKey("Capped"), "other-jid", String(Date.now() + 60_000));
  await withWeb({}, async (web) => {
    const { status, body } = await new WebSession(web.url).get("/queues/lonely");
    assert.equal(status, 200);
    assert.match(body, /No live process fetches from this queue/);
    assert.match(body, /<strong>Stuck<\/strong> is deferred by a kill switch: its jobs are re-scheduled\s+60 s/);
    assert.match(body, /<strong>Capped<\/strong> is at its concurrency limit \(1 of 1\s+running,\s+0 parked\)/);
    assert.doesNotMatch(body, /<strong>Free<\/strong>/);
  });
  // A queue a live process fetches from, with free slots and nothing switched off: nothing stops it.
  await addProcess(redis.redis, "web-host:4242:abcdef012345", "tag");
  await redis.redis.lpush(
    queueKey("default"),
    JSON.stringify({ class: "Free", args: [], jid: "f-2", queue: "default" }),
  );
  await withWeb({}, async (web) => {
    const { body } = await new WebSession(web.url).get("/queues/default");
    assert.match(body, /<details class="why" >/);
    assert.match(body, /Nothing stops them/);
  });
});
