/** The error test/jobs/brokenJobs.ts throws while loading; a separate module so tests can import it. */
export const BROKEN_JOBS_MESSAGE = "brokenJobs: deliberate failure while loading the job module";
