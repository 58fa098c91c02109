/**
 * Rails ActiveJob interop as a plug-in (docs/activejob.md): a job Rails pushed through its Sidekiq
 * adapter runs the registered class its wrapper names (unless a class is registered under the
 * wrapper's own name); its failure retries the wrapper. Looked at only when no class has the payload's
 * name, so plain jobs never pay for it.
 */
import { definePlugin } from "../../server/plugin.js";
import { wrappedActiveJob, type ActiveJobContext } from "./wrapper.js";

declare module "../../client/Job.js" {
  interface Job {
    /** Set when the job came from a Rails `perform_later`: ActiveJob's job_id, executions, locale, … */
    activeJob?: ActiveJobContext;
  }
}

export const activeJob = definePlugin({
  name: "activejob",
  server() {
    return { resolveClass: (job) => wrappedActiveJob(job) };
  },
});
