/**
 * GitLab-compressed args that inflate to ~90 MB each, in the dead set, seen through `tsq-cluster
 * --web-port`: the list shows "compressed, N KB" without inflating, one job's page inflates at most
 * 1 MB and says it cut there, and the supervisor's /healthz keeps answering meanwhile.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { DEAD } from "../../../src/wire/keys.js";
import { freePort, useRedis } from "../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { withinDeadline } from "../../helpers/timing.js";

const redis = useRedis();

/** Args of one 90 MB string, deflated (~90 KB) and base64-encoded (~120 KB), as GitLab stores them. */
function bombArgs(): string {
  const inflated = JSON.stringify(["ab".repeat(45 * 1024 * 1024)]);
  return deflateSync(inflated, { level: 9 }).toString("base64");
}

/** The process's resident set (KB), from /proc. */
function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0);
}

/** Polls `url` until `done` is set; returns the slowest answer (ms) and how many answers came. */
async function pollSlowest(url: string, done: { value: boolean }): Promise<{ slowestMs: number; answers: number }> {
  let slowestMs = 0;
  let answers = 0;
  while (!done.value) {
    const started = performance.now();
    // A health check that never answers counts as its timeout (30 s), so the figure is reported.
    await fetch(url, { signal: AbortSignal.timeout(30_000) })
      .then((res) => res.text())
      .catch(() => undefined);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    answers++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { slowestMs, answers };
}

test("dead jobs whose compressed args inflate to 90 MB: /morgue and a job page stay small, /healthz answers", async () => {
  const args = bombArgs();
  assert.ok(args.length > 100_000 && args.length < 200_000, `compressed args of ${args.length} characters`);
  const now = Date.now() / 1000;
  for (let i = 0; i < 3; i++) {
    const job = {
      class: "BombJob",
      queue: "default",
      args: [args],
      compressed: true,
      original_job_size_bytes: 94_371_854,
      jid: `bomb${i}00000000000000000`,
      created_at: now - 60,
      enqueued_at: now - 60,
      failed_at: now - 10,
      error_class: "RuntimeError",
      error_message: "boom",
    };
    await redis.redis.zadd(DEAD, now - i, JSON.stringify(job));
  }
  const [metricsPort, webPort] = [await freePort(), await freePort()];
  const cluster = startTsq(
    [
      "-r",
      TEST_JOBS,
      "-q",
      "default",
      "--processes",
      "1",
      "--metrics-port",
      String(metricsPort),
      "--web-port",
      String(webPort),
    ],
    { REDIS_URL: redis.url, TSQ_LOG_FORMAT: "json" },
    "bin/tsq-cluster.js",
  );
  try {
    const web = `http://127.0.0.1:${webPort}`;
    const healthz = `http://127.0.0.1:${metricsPort}/healthz`;
    await eventually(
      async () => ((await fetch(`${web}/stats`).catch(() => null))?.status === 200 ? true : undefined),
      30_000,
      `the dashboard answers: ${cluster.output().slice(-2000)}`,
      250,
    );
    assert.equal((await fetch(healthz)).status, 200);
    const pid = cluster.child.pid!;
    const before = rssKb(pid);

    const done = { value: false };
    const polling = pollSlowest(healthz, done);
    const started = performance.now();
    const res = await fetch(`${web}/morgue`);
    const body = await res.text();
    const listMs = performance.now() - started;
    const key = /href="[^"]*\/morgue\/([\d.]+-bomb\w+)"/.exec(body)?.[1];
    const pageStarted = performance.now();
    const jobPage = key === undefined ? "" : await (await fetch(`${web}/morgue/${key}`)).text();
    const pageMs = performance.now() - pageStarted;
    done.value = true;
    const { slowestMs, answers } = await polling;
    const grownKb = rssKb(pid) - before;
    console.log(
      `GET /morgue ${listMs.toFixed(0)} ms (${body.length} bytes), job page ${pageMs.toFixed(0)} ms ` +
        `(${jobPage.length} bytes), supervisor RSS +${(grownKb / 1024).toFixed(1)} MB, ` +
        `/healthz slowest ${slowestMs.toFixed(0)} ms over ${answers} answers`,
    );

    assert.equal(res.status, 200);
    assert.equal((body.match(/compressed, \d+ KB/g) ?? []).length, 3, "each row says its args are compressed");
    assert.ok(body.length < 200_000, `the list is ${body.length} bytes`);
    assert.ok(key, "the list links each entry's page");
    assert.ok(/Cut at 1024 KB: the args inflate to more than that/.test(jobPage), "the job page says it cut the args");
    assert.ok(jobPage.length < 2_000_000, `the job page is ${jobPage.length} bytes`);
    // Bounds that hold on a busy machine; inflating the three rows costs ~1 GB and seconds.
    assert.ok(grownKb < 150 * 1024, `the supervisor grew by ${(grownKb / 1024).toFixed(0)} MB`);
    withinDeadline(listMs, 5_000, "GET /morgue with three compressed bombs");
    withinDeadline(slowestMs, 3_000, "the slowest /healthz while the dashboard worked");
  } finally {
    assert.equal(await cluster.stop(20_000), 0);
  }
});
