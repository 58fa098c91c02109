/**
 * A job module that loads, but whose startup hook throws, as a deploy whose boot fails would: every
 * `tsq-cluster` child fails before its first heartbeat, so the supervisor must give up (exit non-zero)
 * instead of forking forever, and log this message. (A module that throws while loading, brokenJobs.ts,
 * is refused by the supervisor itself before anything forks.) Never import it from a test.
 */
import { configureServer } from "../../src/index.js";
import { BROKEN_START_MESSAGE } from "./brokenJobsMessage.js";

export class NeverRunsJob {
  perform(): void {}
}

configureServer((config) =>
  config.on("startup", () => {
    throw new Error(BROKEN_START_MESSAGE);
  }),
);
