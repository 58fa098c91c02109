/**
 * Reliable fetch's acknowledgements: batched per turn, exact bytes, duplicates removed once, bounded
 * when Redis lags, drained by a stop; and a graceful stop never leaves a finished job to run again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";
import { AckBatcher, type AckedJob, type FetchOutlook } from "../../src/server/fetch/AckBatcher.js";
import { ackMark, wholeJob } from "../../src/server/fetch/ackMark.js";
import { ackJobsLua } from "../../src/server/fetch/scripts.js";
import { logger } from "../../src/platform/logger.js";

const handle = useRedis();
const KEY = "queue:sq|host:1:abc|default";

/** A job as a client writes it, with a 24-character jid. */
function payload(jid: string, extra = ""): string {
  return `{"class":"NoopJob","args":[${extra}],"retry":true,"queue":"default","jid":"${jid}","created_at":1795425540.123}`;
}

/** The job as fetched: its bytes and text. */
let fetchOrder = 0;
function fetched(job: string | Buffer): AckedJob {
  const raw = Buffer.isBuffer(job) ? job : Buffer.from(job);
  return { raw, job: raw.toString(), seq: fetchOrder++ };
}

/** ack-jobs-1.lua's arguments for these jobs: the marks in one string, then the jobs sent whole. */
function marks(...jobs: (string | Buffer)[]): [string, ...(string | Buffer)[]] {
  let packed = "";
  const whole: (string | Buffer)[] = [];
  for (const job of jobs) {
    const { raw, job: text } = fetched(job);
    const mark = ackMark(raw);
    if (mark === undefined) whole.push(wholeJob(raw, text));
    else packed += mark;
  }
  return [packed, ...whole];
}

const jid = (i: number) => i.toString(16).padStart(24, "0");

test("a job is marked by its length and the bytes around its jid; without a jid, or with non-ASCII there, whole", () => {
  const job = payload(jid(7));
  const [length, offset, width, bytes] = ackMark(Buffer.from(job))!.split(" ");
  assert.equal(Number(length), Buffer.byteLength(job));
  assert.equal(Number(width), 40);
  assert.equal(job.slice(Number(offset) - 1, Number(offset) - 1 + 40), bytes);
  assert.ok(bytes!.startsWith(`"jid":"${jid(7)}"`));
  assert.equal(ackMark(Buffer.from("{}")), undefined, "no jid: sent whole");
  assert.equal(wholeJob(Buffer.from("{}"), "{}"), "{}");
  const binary = Buffer.from('{"jid":"ab', "latin1");
  binary[8] = 0xff;
  assert.equal(ackMark(binary), undefined, "non-ASCII bytes by the jid: sent whole");
  assert.ok(Buffer.isBuffer(wholeJob(binary, binary.toString())), "and as bytes, since they are not UTF-8");
  assert.equal(ackMark(Buffer.from('{"jid":"x"}')), '11 2 10 "jid":"x"}', "a mark ends with the job");
  const nested = payload(jid(8), `{"jid":"${jid(9)}"}`);
  assert.equal(ackMark(Buffer.from(nested)), undefined, "a second jid key (in args): sent whole");
});

test("ack-jobs-1.lua removes each acked job once, by its mark or its bytes, keeping the rest in order", async () => {
  const [a, b, c, d, e] = [1, 2, 3, 4, 5].map((i) => payload(jid(i)));
  const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  const sameJidLonger = payload(jid(1), "1");
  // Head to tail: e d c b a b(again) binary sameJidLonger
  await handle.redis.rpush(KEY, e!, d!, c!, b!, a!, b!, binary, sameJidLonger);
  assert.equal(await ackJobsLua.run(handle.redis, KEY, ...marks(a!, b!, binary, payload(jid(99)))), 3);
  assert.deepEqual(
    await handle.redis.lrangeBuffer(KEY, 0, -1),
    [e, d, c, b, sameJidLonger].map((j) => Buffer.from(j!)),
    "one b removed, the one nearest the tail; the same jid with another length is another entry",
  );
  // A long list and a small batch take the LREM path: same result.
  await handle.redis.del(KEY);
  const many = Array.from({ length: 100 }, (_, i) => payload(jid(1000 + i)));
  await handle.redis.rpush(KEY, ...many);
  assert.equal(await ackJobsLua.run(handle.redis, KEY, ...marks(many[3]!, many[97]!)), 2);
  const rest = many.filter((_, i) => i !== 3 && i !== 97);
  assert.deepEqual(await handle.redis.lrange(KEY, 0, -1), rest);
  assert.equal(await ackJobsLua.run(handle.redis, KEY, ...marks(...rest)), 98);
  assert.equal(await handle.redis.exists(KEY), 0, "a list acked to empty is gone");
});

test("acks of one turn go in one call; drain waits for them; each job is settled after its write", async () => {
  const jobs = Array.from({ length: 300 }, (_, i) => fetched(payload(jid(i))));
  await handle.redis.rpush(KEY, ...jobs.map((j) => j.raw));
  await handle.redis.config("RESETSTAT");
  const settled: AckedJob[] = [];
  const acks = new AckBatcher(handle.redis, logger(), (job) => settled.push(job));
  for (const job of jobs) assert.equal(acks.ack(KEY, job), undefined, "no promise to wait for");
  await acks.drain();
  assert.equal(await handle.redis.exists(KEY), 0);
  assert.equal(settled.length, 300);
  const stats = await handle.redis.info("commandstats");
  const calls = Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? /cmdstat_eval:calls=(\d+)/.exec(stats)?.[1]);
  assert.equal(calls, 2, "300 acks in one turn: two calls (256 per call at most)");
});

test("acks that rode a failed fetch are sent on their own, and acks queued meanwhile are not dropped", async () => {
  const [a, b] = [fetched(payload(jid(700))), fetched(payload(jid(701)))];
  await handle.redis.rpush(KEY, b.raw, a.raw);
  const settled: AckedJob[] = [];
  const acks = new AckBatcher(handle.redis, logger(), (job) => settled.push(job));
  assert.equal(acks.ack(KEY, a), undefined);
  const riding = acks.ride([KEY]);
  assert.ok(riding, "a's ack rides with the fetch");
  assert.equal(acks.ack(KEY, b), undefined, "b finishes while the fetch is on its way");
  riding.settle(new Error("the fetch's connection was lost"));
  await acks.drain();
  assert.equal(await handle.redis.exists(KEY), 0, "both acknowledged");
  assert.deepEqual(settled.map((job) => job.seq).sort(), [a.seq, b.seq].sort(), "both settled");
});

/** Turns of the event loop. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Calls of ack-jobs-1.lua since the last RESETSTAT. */
async function ackCalls(): Promise<number> {
  const stats = await handle.redis.info("commandstats");
  return (
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
    Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)
  );
}

test("acks wait for the answer of a fetch on its way, then ride the fetch after it; with none coming, they go on their own", async () => {
  const jobs = Array.from({ length: 3 }, (_, i) => fetched(payload(jid(800 + i))));
  await handle.redis.rpush(KEY, ...jobs.map((j) => j.raw));
  await handle.redis.config("RESETSTAT");
  let outlook: FetchOutlook = "answering";
  const acks = new AckBatcher(handle.redis, logger(), undefined, () => outlook);
  assert.equal(acks.ack(KEY, jobs[0]!), undefined);
  await turns(20);
  assert.equal(await ackCalls(), 0, "no call of their own while the fetch on its way may be followed by one");
  // The fetch is answered and the next one goes out within the turn: the ack rides it.
  outlook = "soon";
  acks.fetchAnswered();
  const riding = acks.ride([KEY]);
  assert.deepEqual(riding?.marks, [ackMark(jobs[0]!.raw)]);
  riding.settle();
  await turns(5);
  assert.equal(await ackCalls(), 0, "carried by the fetch");

  // Answered, and no fetch follows: after a turn's grace they go on their own.
  outlook = "answering";
  assert.equal(acks.ack(KEY, jobs[1]!), undefined);
  await turns(5);
  outlook = "soon";
  acks.fetchAnswered();
  await eventually(async () => (await ackCalls()) === 1, 5_000, "sent on their own");

  // A fetch that waits in Redis for a job cannot carry them: at once.
  outlook = "none";
  assert.equal(acks.ack(KEY, jobs[2]!), undefined);
  await eventually(async () => (await ackCalls()) === 2, 5_000, "sent on their own at once");
  await acks.drain();
  assert.deepEqual(
    await handle.redis.lrange(KEY, 0, -1),
    [jobs[0]!.raw.toString()],
    "the first was carried by a fetch this test never sent",
  );
});

test("a worker draining a backlog with reliable fetch makes one call per batch: its acks ride the fetches", async () => {
  await handle.redis.flushdb();
  await pushJobs(
    handle.url,
    "NoopJob",
    Array.from({ length: 5_000 }, () => []),
  );
  await handle.redis.rename("queue:default", "staged");
  const tsq = startTsq(["-r", TEST_JOBS, "--fetch", "reliable", "-c", "50"], { REDIS_URL: handle.url });
  await tsq.waitForLine((l) => l.msg === "tsq worker started");
  await handle.redis.config("RESETSTAT");
  await handle.redis.rename("staged", "queue:default");
  const left = async () => {
    const lists = await handle.redis.keys("queue:*");
    return (await Promise.all(lists.map((list) => handle.redis.llen(list)))).reduce((a, b) => a + b, 0);
  };
  await eventually(async () => (await left()) === 0, 60_000, "every job ran and was acknowledged");
  const stats = await handle.redis.info("commandstats");
  const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  // reliable-fetch.lua moves with one LPUSH per call: its count is the number of fetches.
  const fetches = calls("lpush");
  const scripts = calls("evalsha") + calls("eval");
  assert.ok(fetches >= 100, `${fetches} fetches of at most 50 jobs`);
  // Acks sent on their own would make it two per batch.
  assert.ok(scripts <= fetches * 1.3 + 5, `${scripts} script calls for ${fetches} fetches: acks went on their own`);
  assert.equal(await tsq.stop(), 0);
  assert.equal(await handle.redis.get("stat:processed"), "5000", "every job ran once");
  await handle.redis.flushdb();
});

test("acks wait for Redis once more than 1,024 are pending", async () => {
  const acks = new AckBatcher(handle.redis, logger());
  await handle.redis.client("PAUSE", 500, "ALL"); // Redis answers nothing for 0.5 s
  const started = Date.now();
  let immediate = 0;
  const waits = [];
  for (let i = 0; i < 1100; i++) {
    const done = acks.ack(KEY, fetched(payload(jid(5000 + i))));
    if (done === undefined) immediate++;
    else waits.push(done);
  }
  await Promise.all(waits);
  assert.ok(immediate <= 1024, `${immediate} acks returned at once`);
  assert.ok(waits.length > 0 && Date.now() - started >= 400, "the rest waited for Redis");
  await acks.drain();
});

test("a graceful stop under load: every job runs exactly once (acks drained before the leftovers are requeued)", async () => {
  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 20_000 }, (_, i) => [i]),
  );
  for (let round = 0; round < 3; round++) {
    const tsq = startTsq(["-r", TEST_JOBS, "--fetch", "reliable", "-c", "50"], { REDIS_URL: handle.url });
    await tsq.waitForLine((l) => l.msg === "tsq worker started");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await tsq.stop(), 0);
  }
  const last = startTsq(["-r", TEST_JOBS, "--fetch", "reliable", "-c", "50"], { REDIS_URL: handle.url });
  // Started before it is stopped (the three rounds may have run every job already).
  await last.waitForLine((l) => l.msg === "tsq worker started");
  // Every job ran: an empty queue is not enough, as jobs fetched ahead wait in the private list.
  await eventually(async () => (await handle.redis.bitcount("counted:bits")) === 20_000, 60_000, "every job ran");
  assert.equal(await last.stop(), 0);
  assert.equal(await handle.redis.bitcount("counted:bits"), 20_000, "every job ran");
  assert.equal(await handle.redis.get("counted"), "20000", "and none twice");
});
