/** Job outcomes' public API (docs/outcomes.md). */
export { waitUntilFinished, type WaitUntilFinishedOptions } from "./waitUntilFinished.js";
export { OutcomeWatcher, type WatcherOptions, type WaitOptions, type OutcomeFilter } from "./OutcomeWatcher.js";
export { WaitTimeoutError } from "./errors.js";
export type { JobResult, OutcomeEvent, ProgressEvent, OutcomeStatus, OutcomeError } from "./record.js";
export { DEFAULT_MAX_RESULT_BYTES, type ResultOptions } from "./policy.js";
export type { Progress } from "./ProgressReporter.js";
