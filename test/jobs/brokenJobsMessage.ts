/** The error test/jobs/brokenJobs.ts throws while loading; a separate module so tests can import it. */
export const BROKEN_JOBS_MESSAGE = "brokenJobs: deliberate failure while loading the job module";

/** The error the startup hook of test/jobs/brokenStartJobs.ts throws in every child. */
export const BROKEN_START_MESSAGE = "brokenStartJobs: deliberate failure of a startup hook";
