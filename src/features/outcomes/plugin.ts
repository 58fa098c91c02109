/**
 * Job outcomes as a plug-in (docs/outcomes.md): an opted-in class's end (done with its result, failed,
 * dead, cancelled; a suspended execution is not an end) is stored under its jid with a TTL and announced
 * on a capped stream, for `waitUntilFinished` and subscribers; `this.progress(n, data?)` shows in the
 * job's work entry and is a `progress` event of ctx.events (an opted-in job's goes on the stream too). A
 * class that does not opt in costs a field read per job and no Redis command.
 */
import { definePlugin } from "../../server/plugin.js";
import { OutcomeRecorder } from "./OutcomeRecorder.js";
import { ProgressReporter } from "./ProgressReporter.js";
import type { ResultOptions } from "./policy.js";
import type { JobOptions } from "../../client/options.js";
import { recordOutcomeLua } from "./scripts.js";
import type { JobPayload } from "../../wire/payload.js";

declare module "../../client/options.js" {
  interface JobOptions {
    /** Record this job's outcome for `waitUntilFinished` (docs/outcomes.md): `{ ttl: 3600 }`, seconds. */
    result?: ResultOptions;
  }
}

declare module "../../server/hooks.js" {
  interface JobEvents {
    /** A running job reported its progress (`this.progress(n, data?)`); every call. */
    progress: [job: JobPayload, queue: string, progress: { n: number; data?: unknown }];
  }
}

declare module "../../client/Job.js" {
  interface Job {
    /**
     * Reports progress (`n`, usually a percentage, and optional JSON `data` up to 4 KB), shown on the
     * Busy page and by `tsqctl busy`; written at most once a second (docs/outcomes.md). Each call is a
     * `job:progress` event of the Worker; an opted-in job's reports reach `subscribe({ progress: true })`.
     */
    progress(n: number, data?: unknown): void;
  }
}

export const outcomes = definePlugin({
  name: "outcomes",
  scripts: [recordOutcomeLua],
  jobOptions: ["result"] satisfies (keyof JobOptions)[],
  emits: { job: ["progress"] },
  server(ctx) {
    const recorder = new OutcomeRecorder(ctx);
    return {
      // Every job may report progress; the reporter is built at its first report only. Not async: an
      // async wrapper costs every job two more promises under its log context.
      around(run, instance, job, queue) {
        let reporter: ProgressReporter | undefined;
        const progress = (n: number, data?: unknown): void =>
          (reporter ??= new ProgressReporter(ctx, job, queue, recorder.records(job))).report(n, data);
        Object.assign(instance, { progress });
        // then(ok, fail) rather than finally(), which makes two more promises.
        return run().then(
          (value) => {
            reporter?.close();
            return value;
          },
          (error: unknown) => {
            reporter?.close();
            throw error;
          },
        );
      },
      onEnd: (job, queue, end) => recorder.record(job, queue, end),
      services: [recorder],
    };
  },
});
