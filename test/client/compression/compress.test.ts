/**
 * Job size, GitLab's way: args over 100 KB are stored compressed (`compressed: true`,
 * `original_job_size_bytes`, args = one base64 string of zlib-deflated JSON), a real tsq worker runs
 * them with the original args, Ruby Sidekiq 6.4 reads them as such, tsqctl shows them inflated, a job
 * still over 5 MB is refused at push, and hostile compressed payloads end in the dead set, not a crash.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";
import { execa } from "execa";
import { Client } from "../../../src/client/Client.js";
import { ConfigError, PayloadTooLargeError } from "../../../src/wire/errors.js";
import { DEAD, RETRY, queueKey } from "../../../src/wire/keys.js";
import { RetrySet } from "../../../src/admin/api/sets.js";
import { resolveSizeLimits } from "../../../src/client/compression/settings.js";
import { resolveWorkerOptions } from "../../../src/options/workerOptions.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { giveUpAfter } from "../../helpers/timing.js";

const redis = useRedis();
const TSQCTL = fileURLToPath(new URL("../../../../bin/tsqctl.js", import.meta.url));

function clientFor(t: TestContext, options: ConstructorParameters<typeof Client>[0] = {}): Client {
  assert.ok(redis.url, "the private Redis is not up");
  const client = new Client({ redis: redis.url, ...options });
  t.after(() => client.close());
  return client;
}

/** About 300 KB of JSON rows, as an import job might carry. */
function rows(): { id: number; name: string; text: string }[] {
  return Array.from({ length: 2600 }, (_, id) => ({ id, name: `row ${id}`, text: "lorem ipsum é😀 ".repeat(6) }));
}

async function storedJobs(key: string): Promise<Record<string, unknown>[]> {
  const texts =
    key === queueKey("default") ? await redis.redis.lrange(key, 0, -1) : await redis.redis.zrange(key, 0, -1);
  return texts.map((text) => JSON.parse(text) as Record<string, unknown>);
}

/** Runs Ruby with sidekiq/api against the private Redis; the script's last value comes back as JSON. */
async function ruby<T>(code: string): Promise<T> {
  const script = `require "json"\nSidekiq.logger.level = Logger::WARN\n$stdout.puts("@@" + JSON.generate(begin\n${code}\nend))`;
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      "ruby",
      ["-r", "sidekiq/api", "-e", script],
      { env: { ...process.env, REDIS_URL: redis.url }, timeout: 60_000 },
      (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
    );
  });
  const line = stdout.split("\n").find((l) => l.startsWith("@@"));
  assert.ok(line, `no result from ruby: ${stdout}`);
  return JSON.parse(line.slice(2)) as T;
}

test("a 300 KB job is stored compressed, Ruby sees compressed: true, a real worker runs the original args", async (t) => {
  const client = clientFor(t);
  const args = [rows()];
  const argsBytes = Buffer.byteLength(JSON.stringify(args));
  assert.ok(argsBytes > 280_000 && argsBytes < 400_000, `args are ${argsBytes} bytes`);
  const jid = await client.push({ class: "RecordJob", args });

  const [stored] = await storedJobs(queueKey("default"));
  assert.equal(stored!.compressed, true);
  assert.equal(stored!.original_job_size_bytes, argsBytes);
  const storedArgs = stored!.args as unknown[];
  assert.equal(storedArgs.length, 1);
  assert.match(storedArgs[0] as string, /^[A-Za-z0-9+/]+=*$/);
  assert.ok((storedArgs[0] as string).length < 100_000, "the stored args are much smaller than the original");

  if (requireRubySidekiq(t)) {
    const seen = await ruby<{ compressed: boolean; jid: string; size: number; klass: string; args: number }>(
      'j = Sidekiq::Queue.new("default").first\n' +
        '{ compressed: j["compressed"], jid: j.jid, size: j["original_job_size_bytes"], klass: j.klass, args: j.args.length }',
    );
    assert.deepEqual(seen, { compressed: true, jid, size: argsBytes, klass: "RecordJob", args: 1 });
  }

  const worker = startTsq(["-r", TEST_JOBS, "-c", "2"], { REDIS_URL: redis.url });
  const ran = await eventually(() => redis.redis.lpop("ran"), 30_000, `the job did not run:\n${worker.output()}`);
  const record = JSON.parse(ran) as { jid: string; args: unknown[] };
  assert.equal(record.jid, jid);
  assert.deepEqual(record.args, args);
  await worker.stop();
});

test("a failing compressed job is retried compressed; tsqctl lists it as stored, the API inflates it", async (t) => {
  const client = clientFor(t);
  const message = "boom ".repeat(30_000);
  await client.push({ class: "FailJob", args: [message], retry: 3 });
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2"], { REDIS_URL: redis.url });
  await eventually(() => redis.redis.zcard(RETRY), 30_000, `no retry entry:\n${worker.output()}`);
  await worker.stop();

  const [entry] = await storedJobs(RETRY);
  assert.equal(entry!.compressed, true, "the retry entry stays compressed");
  assert.equal(entry!.error_class, "Error");
  assert.equal((entry!.args as unknown[]).length, 1);
  assert.notEqual((entry!.args as unknown[])[0], message);

  const run = await execa(process.execPath, [TSQCTL, "retries", "--json"], {
    env: { REDIS_URL: redis.url },
    reject: false,
    timeout: giveUpAfter(30_000),
  });
  assert.equal(run.exitCode, 0, run.stderr);
  // A listing never inflates (a hostile entry could inflate to gigabytes): the args as stored, marked.
  const listed = JSON.parse(String(run.stdout)) as {
    entries: { args: unknown[]; args_compressed?: boolean; args_compressed_bytes?: number }[];
  };
  assert.deepEqual(listed.entries[0]!.args, entry!.args);
  assert.equal(listed.entries[0]!.args_compressed, true);
  assert.ok(listed.entries[0]!.args_compressed_bytes! > 0);
  // One job read through the API inflates, within its cap.
  const found = await new RetrySet(redis.redis).findJob(String(entry!.jid));
  assert.deepEqual(found!.args, [message]);
});

test("a job over 5 MB after compression is refused with PayloadTooLargeError naming class and sizes", async (t) => {
  const client = clientFor(t);
  // Random characters in UTF-8's two-byte range: about 6.4 MB of JSON that deflate cannot shrink.
  const bytes = randomBytes(6_400_000);
  const chars: string[] = [];
  for (let i = 0; i < bytes.length; i += 2)
    chars.push(String.fromCharCode(0x80 + (((bytes[i]! << 8) | bytes[i + 1]!) % 1920)));
  const big = chars.join("");
  await assert.rejects(
    client.push({ class: "HugeImportJob", args: [big], jid: "0123456789abcdef01234567" }),
    (error: unknown) => {
      assert.ok(error instanceof PayloadTooLargeError);
      assert.match(
        error.message,
        /^job HugeImportJob \(jid 0123456789abcdef01234567\) is \d{7} bytes \(\d\.\d\d MB\) after compressing its 6400004 bytes \(6\.10 MB\) of args, over the limit of 5242880 bytes \(5\.00 MB\) \(maxPayloadBytes\); store large data elsewhere and pass a reference/,
      );
      return true;
    },
  );
  assert.equal(await redis.redis.dbsize(), 0, "nothing was written");
});

test("hostile compressed payloads go to the dead set with a precise error; the worker keeps working", async (t) => {
  const bomb = deflateSync(Buffer.alloc(20 * 1024 * 1024, 0x20)).toString("base64"); // 20 MB of spaces
  const cases: [string, unknown[], RegExp][] = [
    ["notbase64", ["%%% not base64 %%%"], /args are not valid base64/],
    ["notzlib", [Buffer.from("hello world").toString("base64")], /args are not a zlib stream/],
    ["bomb", [bomb], /args inflate to more than 2000000 bytes \(1\.91 MB\) \(maxInflatedBytes/],
    ["notarray", [deflateSync('{"a":1}').toString("base64")], /inflate to JSON that is not an array/],
    ["notjson", [deflateSync("{nope").toString("base64")], /inflate to text that is not JSON/],
    ["twoargs", ["a", "b"], /args are not one base64 string/],
  ];
  const texts = cases.map(([jid, args]) =>
    JSON.stringify({ class: "RecordJob", args, jid, queue: "default", retry: 0, compressed: true }),
  );
  await redis.redis.lpush(queueKey("default"), ...texts);
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2"], { REDIS_URL: redis.url, TSQ_MAX_INFLATED_BYTES: "2000000" });
  await eventually(async () => (await redis.redis.zcard(DEAD)) === cases.length, 30_000, worker.output());

  const dead = new Map((await storedJobs(DEAD)).map((job) => [job.jid as string, job]));
  for (const [jid, args, message] of cases) {
    const job = dead.get(jid);
    assert.ok(job, `${jid} is in the dead set`);
    assert.equal(job.error_class, "PayloadDecompressionError", jid);
    assert.match(job.error_message as string, message, jid);
    assert.match(job.error_message as string, new RegExp(`^job RecordJob \\(jid ${jid}\\)`));
    assert.deepEqual(job.args, args, `${jid}: the stored args are kept as they came`);
    assert.equal(job.compressed, true);
  }
  assert.equal(await redis.redis.llen("ran"), 0, "none of them ran");
  // The worker is still up and runs the next job.
  const client = clientFor(t);
  await client.push({ class: "RecordJob", args: ["after"] });
  await eventually(() => redis.redis.llen("ran"), 30_000, worker.output());
  assert.equal(worker.child.exitCode, null);
  await worker.stop();
});

test("threshold settings: option, environment, 0 = off, and malformed values named", async (t) => {
  assert.equal(resolveSizeLimits({}, {}).compressThresholdBytes, 100_000);
  assert.equal(resolveSizeLimits({}, { TSQ_COMPRESS_THRESHOLD_BYTES: "2048" }).compressThresholdBytes, 2048);
  assert.equal(
    resolveSizeLimits({ compressThresholdBytes: 10 }, { TSQ_COMPRESS_THRESHOLD_BYTES: "2048" }).compressThresholdBytes,
    10,
  );
  assert.throws(
    () => resolveSizeLimits({}, { TSQ_MAX_PAYLOAD_BYTES: "5MB" }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /TSQ_MAX_PAYLOAD_BYTES must be a whole number of bytes from 1 to 524288000, got "5MB"/.test(error.message),
  );

  const args = ["y".repeat(3000)];
  await clientFor(t, { compressThresholdBytes: 2048 }).push({ class: "RecordJob", args });
  await clientFor(t, { compressThresholdBytes: 0 }).push({ class: "RecordJob", args });
  await clientFor(t, { compressThresholdBytes: 4096 }).push({ class: "RecordJob", args });
  const [under, off, over] = await storedJobs(queueKey("default"));
  assert.equal(over!.compressed, true);
  assert.equal(over!.original_job_size_bytes, 3004);
  assert.equal(off!.compressed, undefined);
  assert.deepEqual(off!.args, args);
  assert.equal(under!.compressed, undefined);
});

test("worker settings: config file > environment > default, in bytes", () => {
  const dir = scratchDir("tsq-size");
  writeFileSync(join(dir, "tsq.yml"), "compress_threshold_bytes: 0\nmax_inflated_bytes: 1000000\n");
  const env = { TSQ_COMPRESS_THRESHOLD_BYTES: "50000", TSQ_MAX_PAYLOAD_BYTES: "2000000" };
  const { options } = resolveWorkerOptions(["-C", "tsq.yml"], env, dir);
  assert.equal(options.compressThresholdBytes, 0, "the file wins over the environment");
  assert.equal(options.maxInflatedBytes, 1_000_000);
  assert.equal(options.maxPayloadBytes, 2_000_000, "the environment wins over the default");
  const defaults = resolveWorkerOptions([], {}, scratchDir("tsq-size-empty")).options;
  assert.deepEqual(
    [defaults.compressThresholdBytes, defaults.maxPayloadBytes, defaults.maxInflatedBytes],
    [100_000, 5 * 1024 * 1024, 100 * 1024 * 1024],
  );
  writeFileSync(join(dir, "bad.yml"), "compress_threshold_bytes: 100 KB\n");
  assert.throws(() => resolveWorkerOptions(["-C", "bad.yml"], {}, dir), /compress_threshold_bytes/);
});
