/**
 * What the sidekiq-unique-jobs tests share: a `tsq` worker polling `schedule` about every second, and
 * reads of the stored jobs, lock holders and recorded starts in the file's private Redis.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RedisHandle } from "../../../helpers/redis.js";
import { ROOT, startTsq } from "../../../helpers/tsqProcess.js";

export const SUJ_JOBS = join(ROOT, "dist/test/jobs/sujJobs.js");

export function sujKit(handle: RedisHandle) {
  return {
    /** A worker (concurrency 4) running test/jobs/sujJobs, stopped after the test. */
    worker: (t: { after: (fn: () => Promise<unknown>) => void }): void => {
      const config = join(mkdtempSync(join(tmpdir(), "tsq-suj-")), "tsq.yml");
      writeFileSync(config, "poll_interval_average: 1\n"); // rescheduled jobs come back quickly
      const process = startTsq(["-r", SUJ_JOBS, "-C", config, "-c", "4", "-q", "default", "-t", "1"], {
        REDIS_URL: handle.url,
      });
      t.after(() => process.stop(5000));
    },
    /** The `lock_digest` of a queued or scheduled job. */
    lockOf: async (jid: string): Promise<string> => {
      const queued = [
        ...(await handle.redis.lrange("queue:default", 0, -1)),
        ...(await handle.redis.zrange("schedule", 0, -1)),
      ];
      const job = queued.map((j) => JSON.parse(j) as Record<string, unknown>).find((j) => j.jid === jid);
      assert.ok(job, `job ${jid} is stored`);
      return String(job.lock_digest);
    },
    /** The jids holding a digest's lock. */
    holders: (digest: string) => handle.redis.hkeys(`${digest}:LOCKED`),
    /** The recorded starts of a class. */
    startedOf: async (klass: string): Promise<{ jid: string; class: string }[]> => {
      return (await handle.redis.lrange("started", 0, -1))
        .map((s) => JSON.parse(s) as { jid: string; class: string })
        .filter((s) => s.class === klass);
    },
  };
}
