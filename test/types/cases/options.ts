/**
 * Type tests of job options, compiled against the built package as an app sees it (`import from "tsq"`)
 * by test/types/types.test.ts. Every `@ts-expect-error` line must be needed: tsc reports an unneeded one.
 */
import { Job, type JobOptions } from "tsq";

// An app's own middleware key, declared the documented way (docs/testing.md#custom-job-options).
declare module "tsq" {
  interface JobOptions {
    tenant?: string;
  }
}

class HardJob extends Job {
  static override options: JobOptions = { queue: "critical", retry: 5 };
  perform(_name: string, _count: number): void {}
}

// Known keys compile, the core's and those the built-in features merge in.
void HardJob.set({ queue: "low", retry: 5, retryFor: 3600, backtrace: 10, dead: false, tags: ["a"] });
void HardJob.set({ uniqueFor: 60, uniqueUntil: "start", expiresIn: 3600, lock: "until_executed", lockTtl: 10 });
void HardJob.set({ wait: 30 }).set({ waitUntil: new Date() }).performAsync("bob", 5);
// The app's own key, merged in above.
void HardJob.set({ tenant: "acme" }).performAsync("bob", 5);

// @ts-expect-error -- a typo of `queue`
void HardJob.set({ queueu: "low" });
// @ts-expect-error -- a typo of `retry`
void HardJob.set({ queue: "low", retyr: 5 });
// @ts-expect-error -- `retry` is a boolean or a count
void HardJob.set({ retry: "5" });
// @ts-expect-error -- `uniqueUntil` is "success" or "start"
void HardJob.set({ uniqueUntil: "later" });

class TypoJob extends Job {
  // @ts-expect-error -- typed options catch a typo in `static options` too
  static override options: JobOptions = { queueu: "low" };
  perform(): void {}
}
void TypoJob;

// Every feature's additions come with `import ... from "tsq"`: outcomes' `result` and `this.progress`,
// batches' `this.batch` and `this.workflow`, ActiveJob's `this.activeJob` (no `declare module` needed).
class ReportJob extends Job {
  static override options = { result: { ttl: 3600 } };
  async perform(month: string): Promise<object> {
    this.progress(50, { step: "totals" });
    const before = await this.workflow?.results();
    return { month, before, bid: this.batch?.bid, rails: this.activeJob?.jobId };
  }
}
void ReportJob.set({ result: { ttl: 60, maxBytes: 1024 } }).performAsync("2026-11");
