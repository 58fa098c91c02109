/**
 * A job module that throws while it is being loaded, as a bad deploy would: `tsq-cluster` must give up
 * (exit non-zero) instead of forking children forever, and log this message. Never import it from a test.
 */
import { BROKEN_JOBS_MESSAGE } from "./brokenJobsMessage.js";

export class NeverRunsJob {
  perform(): void {}
}

throw new Error(BROKEN_JOBS_MESSAGE);
