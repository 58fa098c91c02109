/**
 * Example job module for `npm run demo`: `tsq -r dist/examples/demoJobs.js`.
 */
import { Job, defaultClient, logger } from "../src/index.js";

export class WelcomeJob extends Job {
  static override options = { queue: "critical" };
  async perform(name: string, count: number): Promise<void> {
    logger().info({ name, count }, "welcome");
    await defaultClient().redis.incr("demo:welcomed");
  }
}

export class ReportJob extends Job {
  async perform(report: { id: number; rows: number }): Promise<void> {
    await new Promise((r) => setTimeout(r, 5));
    await defaultClient().redis.incrby("demo:rows", report.rows);
  }
}

/** Fails until its third attempt, to show retries. */
export class FlakyJob extends Job {
  static override options = { retry: 3 };
  static retryIn(): number {
    return 1; // seconds: retry fast for the demo
  }
  async perform(): Promise<void> {
    const attempt = (this.payload?.retry_count ?? -1) + 2;
    if (attempt < 3) throw new Error(`flaky failure on attempt ${attempt}`);
    await defaultClient().redis.set("demo:flaky", `succeeded on attempt ${attempt}`);
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
