/**
 * tsqctl on a real terminal, under tmux (a private tmux server per file, `-L`): `top` draws the live
 * processes and queues and quits on q or Ctrl-C with status 0, and destructive commands ask for
 * confirmation. The screen is read with `tmux capture-pane`.
 */
import { after, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "../../src/client/Client.js";
import { RETRY } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";

const redis = useRedis();
const BIN = fileURLToPath(new URL("../../../bin/tsqctl.js", import.meta.url));
const SOCKET = `tsq-test-${process.pid}`;

function tmux(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
  return { status: run.status, stdout: run.stdout ?? "", stderr: run.stderr ?? "" };
}

function tmuxAvailable(t: TestContext): boolean {
  if (spawnSync("tmux", ["-V"]).status === 0) return true;
  if (process.env.CI === "true") throw new Error("tmux is not installed; CI must run the terminal tests");
  process.stderr.write(`NOTICE: skipping "${t.name}": tmux is not installed (apt-get install -y tmux)\n`);
  t.skip("tmux is not installed");
  return false;
}

after(() => {
  tmux("kill-server");
});

/** Single-quotes a word for the shell tmux runs the command with. */
const sh = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Starts `tsqctl <args>` in a detached 160x40 session; when it exits the pane prints EXIT=<status>
 * and stays a while so the test can read it.
 */
function open(t: TestContext, session: string, args: string[]): void {
  const command = `REDIS_URL=${sh(redis.url)} ${sh(process.execPath)} ${sh(BIN)} ${args.map(sh).join(" ")}; echo "EXIT=$?"; sleep 60`;
  const run = tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "40", command);
  assert.equal(run.status, 0, `tmux new-session failed: ${run.stderr}`);
  t.after(() => tmux("kill-session", "-t", session));
}

function screen(session: string): string {
  return tmux("capture-pane", "-p", "-t", session).stdout;
}

async function waitForScreen(
  session: string,
  check: (text: string) => boolean,
  what: string,
  ms = 15_000,
): Promise<string> {
  let last = "";
  await eventually(
    async () => {
      last = screen(session);
      return check(last);
    },
    ms,
    `${what}; the screen was:\n${last}`,
    200,
  );
  return last;
}

test("top shows the processes with busy/concurrency and the queues with sizes, refreshes, and quits on q", async (t) => {
  if (!tmuxAvailable(t)) return;
  const tsq = startTsq(["-r", TEST_JOBS, "-q", "work", "-c", "5", "-g", "toptag"], { REDIS_URL: redis.url });
  t.after(() => tsq.stop(5000));
  const identity = String((await tsq.waitForLine((line) => line.msg === "tsq worker started")).identity);
  const client = new Client({ redis: redis.redis });
  await client.pushBulk({ class: "RecordJob", args: [[1], [2], [3]], queue: "waiting" });
  await client.pushBulk({ class: "RecordJob", args: [[1], [2]], queue: "other" });
  await client.push({ class: "SleepJob", args: [30], queue: "work" });

  open(t, "top", ["top"]);
  const first = await waitForScreen(
    "top",
    (text) => text.includes(identity) && /\nwaiting\s+3\s/.test(text),
    "top never showed the process and the queues",
  );
  assert.match(
    first,
    /^tsqctl top\s+redis:\/\/127\.0\.0\.1:\d+\/0\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\s+every 2 s/,
  );
  assert.match(
    first,
    /Processed \d+ \(.+\/s\)\s+Failed \d+ \(.+\/s\)\s+Busy \d\/5\s+Enqueued 5\s+Retries 0\s+Scheduled 0\s+Dead 0/,
  );
  assert.match(first, /PROCESSES \(1\)\n\s*PROCESS\s+TAGS\s+BUSY\/CONC\s+RSS\s+LAST BEAT\s+STARTED\s+QUEUES\n/);
  assert.match(
    first,
    new RegExp(`${identity.replace(/[.]/g, "\\.")}\\s+\\[toptag\\]\\s+\\d/5\\s+[\\d.]+ MB\\s+.* ago\\s+.* ago\\s+work`),
  );
  assert.match(first, /QUEUES \(3\)\nQUEUE\s+SIZE\s+LATENCY\n/);
  assert.match(first, /\nother\s+2\s+[\d.]+ s\n/);
  assert.match(first, /\nwaiting\s+3\s+[\d.]+ s\n/);

  // The next heartbeat (≤ 10 s) publishes the running SleepJob, and a refresh shows it.
  await waitForScreen(
    "top",
    (text) => new RegExp(`\\[toptag\\]\\s+1/5`).test(text) && /Busy 1\/5/.test(text),
    "top never showed busy 1/5",
  );
  await client.push({ class: "RecordJob", args: [4], queue: "waiting" });
  await waitForScreen("top", (text) => /\nwaiting\s+4\s/.test(text), "top did not refresh the queue size");

  assert.equal(tmux("send-keys", "-t", "top", "q").status, 0);
  const done = await waitForScreen("top", (text) => text.includes("EXIT="), "top did not quit on q", 5000);
  assert.match(done, /EXIT=0/);
  assert.doesNotMatch(done, /PROCESSES/, "the shell's screen is back (alternate screen left)");
});

test("top quits on Ctrl-C with status 0", async (t) => {
  if (!tmuxAvailable(t)) return;
  open(t, "ctrlc", ["top", "--interval", "0.5"]);
  await waitForScreen("ctrlc", (text) => text.includes("QUEUES (0)"), "top did not draw");
  tmux("send-keys", "-t", "ctrlc", "C-c");
  assert.match(
    await waitForScreen("ctrlc", (text) => text.includes("EXIT="), "top did not quit on Ctrl-C", 5000),
    /EXIT=0/,
  );
});

test("on a terminal, clear asks first: no keeps the set (status 1), yes clears it", async (t) => {
  if (!tmuxAvailable(t)) return;
  await redis.redis.zadd(
    RETRY,
    "1800000000",
    '{"class":"A","args":[],"jid":"a"}',
    "1800000001",
    '{"class":"B","args":[],"jid":"b"}',
  );
  open(t, "no", ["clear", "retry"]);
  await waitForScreen("no", (text) => text.includes("Clear the retry set (2 jobs)? [y/N]"), "no prompt");
  tmux("send-keys", "-t", "no", "n", "Enter");
  const refused = await waitForScreen("no", (text) => text.includes("EXIT="), "clear did not finish");
  assert.match(refused, /tsqctl clear: aborted; nothing was changed\nEXIT=1/);
  assert.equal(await redis.redis.zcard(RETRY), 2);

  open(t, "yes", ["clear", "retry"]);
  await waitForScreen("yes", (text) => text.includes("[y/N]"), "no prompt");
  tmux("send-keys", "-t", "yes", "y", "Enter");
  const cleared = await waitForScreen("yes", (text) => text.includes("EXIT="), "clear did not finish");
  assert.match(cleared, /cleared the retry set \(2 jobs\)\nEXIT=0/);
  assert.equal(await redis.redis.zcard(RETRY), 0);
});
