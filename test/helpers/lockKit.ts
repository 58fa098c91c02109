/**
 * What the lock tests (deduplication, unique jobs) share: tsqctl against the file's private Redis, a
 * client per step, pushes of a class, and waits on the `started` / `ran` records of test/jobs/lockedRun.
 */
import assert from "node:assert/strict";
import { Client } from "../../src/client/Client.js";
import type { RedisHandle } from "./redis.js";
import { eventually, startTsq } from "./tsqProcess.js";
import type { TestContext } from "node:test";
import { tsqctl as runTsqctl } from "./tsqctl.js";

export interface Started {
  jid: string;
  pid: number;
  runs: number;
}

type Klass = { name: string };

export function lockKit(handle: RedisHandle) {
  return {
    /** Runs `tsqctl <args> --yes`; fails the test on a non-zero exit. */
    tsqctl: async (...args: string[]): Promise<string> => {
      const run = await runTsqctl(
        [...args, "--yes"],
        { ...process.env, REDIS_URL: handle.url },
        { stripFinalNewline: false },
      );
      assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")} failed: ${run.stderr}${run.stdout}`);
      return run.stdout;
    },
    withClient: async <T>(fn: (client: Client) => Promise<T>): Promise<T> => {
      const client = new Client({ redis: handle.url });
      try {
        return await fn(client);
      } finally {
        await client.close();
      }
    },
    push: (client: Client, klass: Klass, args: unknown[], at?: number) =>
      client.push({ class: klass, args, ...(at === undefined ? {} : { at }) }),
    /** The job's `runs`-th start, once recorded. */
    started: (jid: string, runs = 1): Promise<Started> =>
      eventually(
        async () =>
          (await handle.redis.lrange("started", 0, -1))
            .map((t) => JSON.parse(t) as Started)
            .find((s) => s.jid === jid && (s.runs ?? 1) >= runs),
        30_000,
        `job ${jid} starts (run ${runs})`,
      ),
    /** A one-child tsq-cluster with reliable fetch running `jobs`, for SIGKILL-and-recover tests; stopped after the test. */
    reliableCluster: (t: TestContext, jobs: string): void => {
      const cluster = startTsq(
        ["-r", jobs, "--processes", "1", "-c", "2", "-q", "default", "-t", "1", "--fetch", "reliable"],
        { REDIS_URL: handle.url },
        "bin/tsq-cluster.js",
      );
      t.after(() => cluster.stop(10_000));
    },
    /** How many times the job finished. */
    ran: async (jid: string) => (await handle.redis.lrange("ran", 0, -1)).filter((j) => j === jid).length,
  };
}
