export { DurableJob, type StepContext, type WaitOptions } from "./DurableJob.js";
export { signal, type SignalOptions } from "./signal.js";
export { cancel, type CancelResult } from "./cancel.js";
export { WaitTimeoutError, JobTimeoutError, JobCancelledError, StepOrderError, JournalError } from "./errors.js";
