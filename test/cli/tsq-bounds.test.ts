/**
 * The real `tsq` and `tsq-cluster` binaries refuse numbers past their bounds before connecting to Redis:
 * exit status 2 and one message naming the flag or key and the allowed range.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../helpers/tsqProcess.js";
import { workdirs } from "../helpers/fixtures.js";
import { giveUpAfter } from "../helpers/timing.js";

const workdir = workdirs("tsq-bounds-cli");

function run(bin: string, args: string[], cwd = workdir()) {
  return spawnSync(process.execPath, [join(ROOT, bin), ...args], {
    cwd,
    encoding: "utf8",
    // A port nothing listens on: old code that accepted the value fails to connect rather than hang.
    env: { PATH: process.env["PATH"], REDIS_URL: "redis://127.0.0.1:1/0" },
    timeout: giveUpAfter(60_000),
  });
}

test("tsq -t 3000000 exits 2 naming the flag and the range", () => {
  const result = run("bin/tsq.js", ["-t", "3000000"]);
  assert.equal(result.status, 2, result.stderr);
  assert.match(
    result.stderr,
    /^tsq: option '-t, --timeout <seconds>' argument '3000000' is invalid\. Expected a number of seconds above 0 and at most 86400\.\n/,
  );
});

test("tsq -c 100000000 exits 2 before allocating anything", () => {
  const result = run("bin/tsq.js", ["-c", "100000000"]);
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /argument '100000000' is invalid\. Expected an integer from 1 to 10000 \(job slots\)\./);
});

test("heartbeat_interval: 3000000 in the config file exits 2", () => {
  const result = run("bin/tsq.js", [], workdir("heartbeat_interval: 3000000\n"));
  assert.equal(result.status, 2, result.stderr);
  assert.equal(
    result.stderr,
    "tsq: config/tsq.yml: heartbeat_interval must be a number of seconds above 0 and at most 86400, got 3000000\n",
  );
});

test("tsq-cluster -t 3000000 and timeout: .inf exit 2", () => {
  const flag = run("bin/tsq-cluster.js", ["-t", "3000000", "--dryrun"]);
  assert.equal(flag.status, 2, flag.stderr);
  assert.match(flag.stderr, /^tsq-cluster: option '-t, --timeout <seconds>' argument '3000000' is invalid\./);
  const file = run("bin/tsq-cluster.js", ["--dryrun"], workdir("timeout: .inf\n"));
  assert.equal(file.status, 2, file.stderr);
  assert.match(file.stderr, /timeout must be a number of seconds above 0 and at most 86400, got Infinity\n$/);
});

test("tsqctl web --port 70000 exits 2 naming the flag and the range", () => {
  const result = run("bin/tsqctl.js", ["web", "--port", "70000", "--redis-url", "redis://127.0.0.1:1/0"]);
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /--port must be a whole number from 0 to 65535\./);
});
