/**
 * Example job module for `npm run demo`: `tsq-cluster -r dist/examples/demoJobs.js`.
 */
import { Job, defaultClient, logger } from "../src/index.js";

export class WelcomeJob extends Job {
  static override options = { queue: "critical" };
  async perform(name: string, count: number): Promise<void> {
    logger().info({ name, count }, "welcome");
    await defaultClient().redis.incr("demo:welcomed");
  }
}

/** A report that takes a little while (5–50 ms). */
export class ReportJob extends Job {
  async perform(report: { id: number; rows: number }): Promise<void> {
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 45));
    await defaultClient().redis.incrby("demo:rows", report.rows);
  }
}

/** A slow export (1–3 s). */
export class ExportJob extends Job {
  static override options = { queue: "low" };
  async perform(id: number): Promise<void> {
    await new Promise((r) => setTimeout(r, 1000 + Math.random() * 2000));
    await defaultClient().redis.incr("demo:exports");
    void id;
  }
}

/** Fails until its third attempt, to show retries. */
export class FlakyJob extends Job {
  static override options = { retry: 3 };
  static retryIn(): number {
    return 2; // seconds: retry fast for the demo
  }
  async perform(): Promise<void> {
    const attempt = (this.payload?.retry_count ?? -1) + 2;
    if (attempt < 3) throw new Error(`flaky failure on attempt ${attempt}`);
    await defaultClient().redis.incr("demo:flaky");
  }
}

export class ReminderJob extends Job {
  async perform(text: string): Promise<void> {
    await defaultClient().redis.set("demo:reminder", text);
  }
}

/** Does nothing: measures the framework's own cost per job (npm run bench). */
export class NoopJob extends Job {
  perform(): void {}
}

/**
 * Reports its own enqueue→start latency (npm run bench). `pushedAt` is `process.hrtime.bigint()` of the
 * pushing process, as a string: the monotonic clock is the same for every process on the machine, so
 * the difference is exact to the nanosecond. The report (an RPUSH to `bench:latency`) happens after the
 * measurement, so it does not count.
 */
export class LatencyJob extends Job {
  async perform(pushedAt: string): Promise<void> {
    const nanoseconds = process.hrtime.bigint() - BigInt(pushedAt);
    await defaultClient().redis.rpush("bench:latency", nanoseconds.toString());
  }
}
