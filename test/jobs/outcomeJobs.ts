/**
 * Job classes for the outcome tests (test/features/outcomes), run in-process and by `tsq -r`:
 * opted-in classes that return, fail for good, fail and retry, return too much, report progress; and a
 * plain class that does not opt in.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Job } from "../../src/client/Job.js";
import { defaultClient } from "../../src/client/defaultClient.js";

/** Seconds an outcome stays readable in these tests. */
const TTL = 600;

export class DoublingJob extends Job {
  static override options = { result: { ttl: TTL } };
  perform(n: number): { n: number; doubled: number } {
    return { n, doubled: n * 2 };
  }
}

/** Never retried: its first failure is its death. */
export class DoomedJob extends Job {
  static override options = { result: { ttl: TTL }, retry: false };
  perform(n: number): void {
    throw new RangeError(`no ${n}`);
  }
}

/** Retried: its first failure is "failed", not "dead". */
export class RetriedJob extends Job {
  static override options = { result: { ttl: TTL }, retry: 3 };
  perform(): void {
    throw new TypeError("try again");
  }
}

/** Fails its first two attempts and returns on the third; retried 1 s later (plus Sidekiq's jitter). */
export class FlakyJob extends Job {
  static override options = { result: { ttl: TTL }, retry: 5 };
  static retryIn(): number {
    return 1;
  }
  perform(): string {
    // retry_count is absent on the first attempt, 0 on the second, 1 on the third.
    const attempt = (this.payload?.retry_count ?? -1) + 2;
    if (attempt <= 2) throw new Error(`attempt ${attempt} fails`);
    return `attempt ${attempt} worked`;
  }
}

/** Retried once, then dead: its retries run out. */
export class ExhaustedJob extends Job {
  static override options = { result: { ttl: TTL }, retry: 1 };
  static retryIn(): number {
    return 1;
  }
  perform(): void {
    throw new RangeError("never works");
  }
}

/** Returns more than its 100-byte cap. */
export class HugeResultJob extends Job {
  static override options = { result: { ttl: TTL, maxBytes: 100 } };
  perform(): string {
    return "x".repeat(1000);
  }
}

/** Does not opt in. */
export class PlainJob extends Job {
  perform(n: number): number {
    return n;
  }
}

/**
 * Reports progress 1..`reports` as fast as it can, then waits until `<key>:go` exists (at most 60 s),
 * so a test can look at it while it runs.
 */
export class ProgressJob extends Job {
  static override options = { result: { ttl: TTL } };
  async perform(key: string, reports: number): Promise<string> {
    for (let i = 1; i <= reports; i++) this.progress(i, { step: i, of: reports });
    const redis = defaultClient().redis;
    const deadline = Date.now() + 60_000;
    while (!(await redis.exists(`${key}:go`)) && Date.now() < deadline) await sleep(50);
    return "finished";
  }
}

/** Reports 1, then 2 and 3 a second later (3 within 2's second: announced as the job ends), then returns. */
export class StepsJob extends Job {
  static override options = { result: { ttl: TTL } };
  async perform(): Promise<string> {
    this.progress(1, { step: "read" });
    await sleep(1100);
    this.progress(2, { step: "sum" });
    this.progress(3);
    return "stepped";
  }
}

/** Reports `reports` times in one burst, then returns. */
export class SpamJob extends Job {
  static override options = { result: { ttl: TTL } };
  perform(reports: number): number {
    for (let i = 1; i <= reports; i++) this.progress(i);
    return reports;
  }
}

/** Does not opt in, and reports 1..`reports` in one burst. */
export class PlainProgressJob extends Job {
  perform(reports: number): number {
    for (let i = 1; i <= reports; i++) this.progress(i, { i });
    return reports;
  }
}
