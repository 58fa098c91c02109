/**
 * No password ever reaches an output. Every command runs against a password-protected Redis with the
 * right password, a wrong one, Redis down and malformed URLs, with `-v`, the URL given every way a user
 * can give it (flag, `--flag=`, a mistyped flag, REDIS_URL, the config file); stdout, stderr, /metrics,
 * /healthz and every value left in Redis are searched for both passwords, raw and URL-encoded.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { execa } from "execa";
import { freePort, startRedisServer } from "../helpers/redis.js";
import { ROOT, TEST_JOBS } from "../helpers/tsqProcess.js";
import { scratchDir } from "../helpers/fixtures.js";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";
import { main } from "../../src/cli/tsqctl.js";
import { giveUpAfter } from "../helpers/timing.js";

// Characters that must be percent-encoded in a URL, so both forms are searched for.
const RIGHT = "Rt:s3cr@t/9f";
const WRONG = "Wr0ng-gu3ss";
const FORMS = [RIGHT, encodeURIComponent(RIGHT), WRONG];

let server: { port: number; child: ChildProcess; dir: string };
let redis: TsqRedis;
let urls: Record<string, string>;

before(async () => {
  server = await startRedisServer(undefined, undefined, ["--requirepass", RIGHT]);
  const host = `127.0.0.1:${server.port}`;
  const enc = encodeURIComponent(RIGHT);
  urls = {
    right: `redis://:${enc}@${host}/0`,
    wrong: `redis://:${WRONG}@${host}/0`,
    acl: `redis://default:${WRONG}@${host}/0`,
    down: `redis://:${enc}@127.0.0.1:${await freePort()}/0`,
    badPort: `redis://:${enc}@127.0.0.1:notaport/0`,
    noScheme: `redis//:${WRONG}@${host}`,
    http: `http://:${enc}@${host}/0`,
  };
  redis = connect(urls.right!, { name: "tsq-test" });
  await redis.ping();
});

after(() => {
  redis?.disconnect();
  server?.child.kill("SIGKILL");
  if (server) rmSync(server.dir, { recursive: true, force: true });
});

const outputs: { label: string; text: string }[] = [];

function leaks(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

function record(label: string, text: string): void {
  outputs.push({ label, text });
  const found = leaks(text);
  assert.deepEqual(found, [], `${label} printed a password (${found.join(", ")}):\n${text.slice(0, 3000)}`);
}

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  TSQ_LOG_FORMAT: "json",
  ...extra,
});

async function get(port: number, path: string): Promise<string> {
  try {
    const reply = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) });
    return `${reply.status} ${await reply.text()}`;
  } catch (error) {
    return `unreachable: ${(error as Error).message}`;
  }
}

/** Runs a worker or cluster for a few seconds (scraping its endpoints), then TERM; returns everything it printed. */
async function runServer(bin: string, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const port = await freePort();
  const child = execa(process.execPath, [join(ROOT, bin), ...args, "-v", "-t", "1", "--metrics-port", String(port)], {
    cwd: ROOT,
    env: env(extraEnv),
    extendEnv: false,
    reject: false,
    all: true,
  });
  await new Promise((r) => setTimeout(r, 2500));
  const endpoints = `${await get(port, "/metrics")}\n${await get(port, "/healthz")}\n${await get(port, "/readyz")}`;
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const result = await child;
  clearTimeout(killer);
  return `${String(result.all)}\n${endpoints}`;
}

for (const [bin, extra] of [
  ["bin/tsq.js", ["-r", TEST_JOBS]],
  ["bin/tsq-cluster.js", ["-r", TEST_JOBS, "--processes", "1"]],
] as const) {
  const name = bin.replace(/^bin\/|\.js$/g, "");
  test(`${name}: right, wrong and down, by flag, --flag=, REDIS_URL and config file`, async () => {
    const dir = scratchDir("tsq-secrets");
    const runs: Promise<void>[] = [];
    const run = (label: string, args: string[], extraEnv?: Record<string, string>) =>
      runs.push(runServer(bin, [...extra, ...args], extraEnv).then((text) => record(`${name} ${label}`, text)));
    for (const which of ["right", "wrong", "acl", "down"]) {
      run(`--redis-url ${which}`, ["--redis-url", urls[which]!]);
      run(`--redis-url=${which}`, [`--redis-url=${urls[which]}`]);
      run(`REDIS_URL ${which}`, [], { REDIS_URL: urls[which]! });
      const config = join(dir, `${which}.yml`);
      writeFileSync(config, `redis_url: "${urls[which]}"\n`);
      run(`config ${which}`, ["-C", config]);
      // Runs in fours: a 2-core machine, and each run is a Node process or three.
      if (runs.length >= 4) await Promise.all(runs.splice(0));
    }
    for (const which of ["badPort", "noScheme", "http"]) {
      run(`--redis-url ${which}`, ["--redis-url", urls[which]!]);
      run(`REDIS_URL ${which}`, [], { REDIS_URL: urls[which]! });
    }
    run("--redis_url= (mistyped flag)", [`--redis_url=${urls.right}`]);
    run("--redis-url= (missing value)", [`--redis-url=`, `${urls.wrong}`]);
    await Promise.all(runs);
  });
}

const TSQCTL = [
  ["stats"],
  ["stats", "--json"],
  ["queues"],
  ["retries", "--json"],
  ["dead"],
  ["scheduled"],
  ["processes", "--json"],
  ["push", "RecordJob", "[1]"],
  ["retry", "--all", "--yes"],
  ["cron", "list"],
  ["nosuchcommand"],
];

/** The option is parsed once, before any command: its other spellings are run with these commands. */
const SPELLED = [["stats"], ["push", "RecordJob", "[1]"]];

/**
 * Runs `work` with everything this process writes to its own stdout and stderr also collected (an
 * ioredis "unhandled error event", a warning): output that bypasses tsqctl's own streams is searched too.
 */
async function collectingProcessOutput(work: () => Promise<void>): Promise<string> {
  let text = "";
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write.bind(stream));
  streams.forEach((stream, i) => {
    stream.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
      text += String(chunk);
      return (originals[i] as (...args: unknown[]) => boolean)(chunk, ...rest);
    };
  });
  try {
    await work();
  } finally {
    streams.forEach((stream, i) => (stream.write = originals[i] as typeof stream.write));
  }
  return text;
}

test("tsqctl: every command, right, wrong, down and malformed; the option before, after and as --redis_url=", async () => {
  const jobs: { which: string; label: string; args: string[] }[] = [];
  for (const which of Object.keys(urls)) {
    const url = urls[which]!;
    for (const command of TSQCTL)
      jobs.push({ which, label: command.join(" "), args: [...command, "--redis-url", url] });
    for (const command of SPELLED) {
      jobs.push({ which, label: `--redis-url first, ${command.join(" ")}`, args: ["--redis-url", url, ...command] });
      jobs.push({ which, label: `${command.join(" ")} --redis_url=`, args: [...command, `--redis_url=${url}`] });
    }
  }
  // Every combination through tsqctl's own entry point, in this process (a hundred Node processes would
  // cost a minute of CPU); ten at a time, so a down Redis's wait does not hold the others back.
  const inProcess = [...jobs];
  const next = async (): Promise<void> => {
    for (let job = inProcess.shift(); job; job = inProcess.shift()) {
      let text = "";
      const io = { out: (t: string) => void (text += t), err: (t: string) => void (text += t) };
      const code = await main(job.args, { ...io, env: { REDIS_URL: urls[job.which]! } });
      // The label names the URL kind, never the URL (it holds the password).
      record(`tsqctl ${job.which}: ${job.label} (exit ${code})`, text);
    }
  };
  record(
    "this process's own output while tsqctl ran",
    await collectingProcessOutput(() => Promise.all(Array.from({ length: 10 }, next)).then(() => undefined)),
  );

  // And as a process, for each kind of URL: what Node itself prints (an uncaught error) counts too.
  const asProcess = jobs.filter((job) => job.label === "stats" || job.label === "push RecordJob [1]");
  assert.equal(asProcess.length, 2 * Object.keys(urls).length);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let job = asProcess.shift(); job; job = asProcess.shift()) {
        const result = await execa(process.execPath, [join(ROOT, "bin/tsqctl.js"), ...job.args], {
          env: env({ REDIS_URL: urls[job.which]! }),
          extendEnv: false,
          reject: false,
          all: true,
          timeout: giveUpAfter(30_000),
        });
        record(`tsqctl process ${job.which}: ${job.label}`, String(result.all));
      }
    }),
  );
});

test("nothing tsq wrote to Redis holds a password", async () => {
  let text = "";
  for (const key of await redis.keys("*")) {
    const type = await redis.type(key);
    const values =
      type === "string"
        ? [await redis.get(key)]
        : type === "hash"
          ? Object.entries(await redis.hgetall(key)).flat()
          : type === "list"
            ? await redis.lrange(key, 0, -1)
            : type === "set"
              ? await redis.smembers(key)
              : type === "zset"
                ? await redis.zrange(key, 0, -1)
                : [];
    text += `${key} ${values.join(" ")}\n`;
  }
  assert.ok(text.length > 0, "the runs above wrote to Redis");
  record("Redis contents", text);
  assert.ok(outputs.length > 100, `searched ${outputs.length} outputs`);
});
