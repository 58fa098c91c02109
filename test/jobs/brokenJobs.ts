/**
 * A job module that throws while it is being loaded, as a bad deploy would: `tsq-cluster` imports it
 * before forking, so it must exit 2 at once with this message, forking nothing. Never import it from a test.
 */
import { BROKEN_JOBS_MESSAGE } from "./brokenJobsMessage.js";

export class NeverRunsJob {
  perform(): void {}
}

throw new Error(BROKEN_JOBS_MESSAGE);
