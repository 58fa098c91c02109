/** The chaos run shared by the reliable and basic tests: 20,000 jobs, a child SIGKILLed every 3,000 done. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RedisHandle } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function config(text: string): string {
  const path = join(scratchDir("tsq-chaos"), "tsq.yml");
  writeFileSync(path, text);
  return path;
}

export function childPids(ppid: number): number[] {
  const out = spawnSync("pgrep", ["-P", String(ppid)], { encoding: "utf8" }).stdout;
  return out.split("\n").filter(Boolean).map(Number);
}

/**
 * Runs 20,000 jobs on a 3-child cluster and SIGKILLs a child each time another 3,000 jobs are done (four
 * kills), once all three are up and work remains. Kills paced by the work done, not by the clock: a fast
 * machine drains the queue in a few seconds and a loaded one boots children slowly, and either way the
 * run holds the same number of kills. Killing children still booting (their restart back-off doubling
 * each time) would leave the cluster down more than working.
 */
/** Jobs done before each kill: four kills while most of the 20,000 are still to run. */
const KILL_AFTER_DONE = [3000, 6000, 9000, 12_000];

export async function chaos(
  handle: RedisHandle,
  fetch: "basic" | "reliable",
): Promise<{ jids: string[]; done: string[]; kills: number }> {
  const N = 20_000;
  const jids = await pushJobs(
    handle.url,
    "MarkJob",
    Array.from({ length: N }, () => [10]),
  );
  const cluster = startTsq(
    [
      "-r",
      TEST_JOBS,
      "--processes",
      "3",
      "-c",
      "10",
      "-t",
      "2",
      "--fetch",
      fetch,
      "-C",
      config("heartbeat_interval: 1\n"),
    ],
    { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
    "bin/tsq-cluster.js",
  );
  await eventually(async () => (await handle.redis.scard("processes")) === 3, 30_000, "3 children up");
  let kills = 0;
  const started = Date.now();
  for (const threshold of KILL_AFTER_DONE) {
    let killed = false;
    while (!killed && (await handle.redis.llen("queue:default")) > 0 && Date.now() - started < 150_000) {
      await sleep(100);
      if ((await handle.redis.llen("done")) < threshold) continue;
      const pids = childPids(cluster.child.pid!);
      const victim = pids[Math.floor(Math.random() * pids.length)];
      const allUp = pids.length === 3 && (await handle.redis.scard("processes")) === 3;
      if (victim !== undefined && allUp && (await handle.redis.llen("queue:default")) > 0) {
        process.kill(victim, "SIGKILL");
        kills++;
        killed = true;
      }
    }
    if (process.env.TSQ_CHAOS_DEBUG)
      console.log(
        `kill ${kills}: queued ${await handle.redis.llen("queue:default")} done ${await handle.redis.llen("done")}`,
      );
  }
  // Let the last recoveries and in-flight jobs settle: the queue and every private list empty, and
  // the done count unchanged for 2 s.
  let last = -1;
  await eventually(
    async () => {
      const [queued, privates, done] = await Promise.all([
        handle.redis.llen("queue:default"),
        handle.redis.keys("queue:sq|*"),
        handle.redis.llen("done"),
      ]);
      const settled = queued === 0 && privates.length === 0 && done === last;
      last = done;
      return settled;
    },
    120_000,
    "work settled",
    2000,
  );
  assert.equal(await cluster.stop(), 0);
  return { jids, done: await handle.redis.lrange("done", 0, -1), kills };
}
