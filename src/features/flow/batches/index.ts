/**
 * Batches and workflows (docs/batches.md): Sidekiq Pro's batch model on tsq's own keys, with callbacks
 * fired exactly once, bounded memory, and workflows whose parents never wait forever.
 */
export { Batch, type BatchOptions, type CallbackOptions } from "./Batch.js";
export { BatchError } from "./refusal.js";
export type { BatchEvent } from "./events.js";
export { type BatchStatus } from "./status.js";
export {
  workflow,
  Workflow,
  type WorkflowOptions,
  type WorkflowState,
  type WorkflowStatus,
} from "./workflow/Workflow.js";
export { type FailurePolicy, type StageLike, type StepSpec } from "./workflow/definition.js";
export { type WorkflowHandle } from "./workflow/results.js";
