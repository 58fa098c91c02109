export { DurableJob, type StepContext, type WaitForOptions } from "./DurableJob.js";
export { signal, type SignalOptions } from "./signal.js";
export { cancel, type CancelResult } from "./cancel.js";
export {
  EventTimeoutError,
  JobTimeoutError,
  JobCancelledError,
  StepOrderError,
  JournalError,
  JournalLostError,
} from "./errors.js";
