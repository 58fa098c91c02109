/** Iterable jobs (Sidekiq 7.3's IterableJob): the base class, enumerators and cancel. */
export { IterableJob } from "./IterableJob.js";
export { rangeEnumerator, arrayEnumerator, type Enumerator, type Step } from "./enumerators.js";
export { cancelIterable, loadState, STATE_TTL, type IterationState } from "./state.js";
