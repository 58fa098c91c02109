/**
 * The Cron page over real HTTP: tsq's schedules (as a leader stores them) and sidekiq-cron's (as Ruby
 * stores them) side by side, hostile text escaped; enqueue now, disable and enable land in Redis with an
 * audit line; CSRF, cross-site and read-only POSTs change nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { CronStore } from "../../../src/features/cron/CronStore.js";
import { SIDEKIQ_CRON_JOBS, sidekiqCronJobKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { HOSTILE, HOSTILE_TEXT, WebSession, startWeb } from "./webHelpers.js";

const handle = useRedis();

async function seedSchedules(): Promise<void> {
  const redis = handle.redis;
  await new CronStore(redis).sync(
    [
      {
        name: "nightly",
        cron: "0 3 * * *",
        class: "ReportJob",
        args: [HOSTILE_TEXT],
        description: HOSTILE[0],
        enabled: true,
        catchUp: false,
        source: "config/tsq.yml",
        queue: "reports",
        jobOptions: { retry: 2 },
      },
    ],
    Date.now() / 1000,
  );
  // As sidekiq-cron 1.8's `Job#save` leaves it.
  await redis.sadd(SIDEKIQ_CRON_JOBS, sidekiqCronJobKey("ruby_report"));
  await redis.hset(sidekiqCronJobKey("ruby_report"), {
    name: "ruby_report",
    klass: HOSTILE[1]!,
    cron: "*/5 * * * * Europe/Paris",
    description: "",
    args: JSON.stringify([HOSTILE[2]]),
    message: JSON.stringify({ queue: "cronq", class: HOSTILE[1], args: [HOSTILE[2]] }),
    status: "enabled",
    active_job: "false",
    date_as_argument: "false",
    symbolize_args: "false",
    queue_name_prefix: "",
    queue_name_delimiter: "",
  });
}

test("/cron lists both schedulers' schedules, escaped, with their actions", async () => {
  await seedSchedules();
  const web = await startWeb({ redis: handle.redis });
  try {
    const { status, body } = await new WebSession(web.url).get("/cron");
    assert.equal(status, 200);
    for (const bad of HOSTILE.slice(0, 2)) assert.ok(!body.includes(bad), `shows ${bad} unescaped`);
    assert.ok(!/href="javascript:/i.test(body));
    assert.match(body, /<a class="tab active" href="\/cron">Cron<\/a>/);
    assert.match(body, /<code>nightly<\/code>/);
    assert.match(body, /<code>ruby_report<\/code>/);
    assert.match(body, /Europe\/Paris/);
    assert.match(body, /action="\/cron\/tsq\/nightly\/enqueue"/);
    assert.match(body, /action="\/cron\/sidekiq-cron\/ruby_report\/disable"/);
    assert.equal((body.match(/<span class="badge">enabled<\/span>/g) ?? []).length, 2);
  } finally {
    await web.stop();
  }
});

test("enqueue now, disable and enable change Redis and log an audit line", async () => {
  await seedSchedules();
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const web = await startWeb({ redis: handle.redis, logger });
  try {
    const session = new WebSession(web.url);
    const token = await session.token("/cron");
    const post = (path: string) => session.post(path, [["authenticity_token", token]]);

    const enqueued = await post("/cron/tsq/nightly/enqueue");
    assert.equal(enqueued.status, 303);
    assert.equal(enqueued.location, "/cron");
    const [raw] = await handle.redis.lrange("queue:reports", 0, -1);
    const job = JSON.parse(raw!) as { class: string; args: unknown[]; cron: string; retry: number };
    assert.deepEqual([job.class, job.args, job.cron, job.retry], ["ReportJob", [HOSTILE_TEXT], "nightly", 2]);
    assert.ok(await handle.redis.hget("tsq:cron:nightly", "last_jid"), "the run is recorded");

    assert.equal((await post("/cron/sidekiq-cron/ruby_report/enqueue")).status, 303);
    assert.equal(await handle.redis.llen("queue:cronq"), 1);
    assert.equal(await handle.redis.llen("cron_job:ruby_report:jid_history"), 1);

    assert.equal((await post("/cron/sidekiq-cron/ruby_report/disable")).status, 303);
    assert.equal(await handle.redis.hget(sidekiqCronJobKey("ruby_report"), "status"), "disabled");
    assert.equal((await post("/cron/tsq/nightly/disable")).status, 303);
    const page = (await session.get("/cron")).body;
    assert.equal((page.match(/<span class="badge warn">disabled<\/span>/g) ?? []).length, 2);
    assert.match(page, /action="\/cron\/tsq\/nightly\/enable"/);
    assert.equal((await post("/cron/tsq/nightly/enable")).status, 303);
    const listed = await new CronStore(handle.redis).get("nightly");
    assert.equal(listed?.enabled, true);

    const audits = lines.filter((l) => l.audit === true).map((l) => [l.action, l.target, l.count]);
    assert.deepEqual(audits, [
      ["cron enqueue", "tsq:nightly", 1],
      ["cron enqueue", "sidekiq-cron:ruby_report", 1],
      ["cron disable", "sidekiq-cron:ruby_report", 1],
      ["cron disable", "tsq:nightly", 1],
      ["cron enable", "tsq:nightly", 1],
    ]);
    assert.equal((await post("/cron/tsq/nobody/enqueue")).status, 404);
    assert.equal((await post("/cron/cronos/nightly/enqueue")).status, 404);
    assert.equal((await post("/cron/tsq/nightly/delete")).status, 404);
  } finally {
    await web.stop();
  }
});

test("a POST without the token, from another site, or in read-only mode changes nothing", async () => {
  await seedSchedules();
  const web = await startWeb({ redis: handle.redis });
  const readOnly = await startWeb({ redis: handle.redis, readOnly: true });
  try {
    const session = new WebSession(web.url);
    const token = await session.token("/cron");
    assert.equal((await session.post("/cron/tsq/nightly/disable", [])).status, 403, "no token");
    const crossSite = await session.post("/cron/tsq/nightly/disable", [["authenticity_token", token]], {
      "sec-fetch-site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
    const ro = new WebSession(readOnly.url);
    const page = (await ro.get("/cron")).body;
    assert.ok(!page.includes("<form"), "read-only shows no action");
    assert.equal((await ro.post("/cron/tsq/nightly/disable", [["authenticity_token", token]])).status, 403);
    assert.equal(await handle.redis.hget("tsq:cron:nightly", "enabled"), "true");
    assert.equal(await handle.redis.llen("queue:reports"), 0);
  } finally {
    await web.stop();
    await readOnly.stop();
  }
});
