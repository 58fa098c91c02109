/** Iterable jobs' own error (exported from the package root); their JobInterrupted is the core's (Processor). */
import { TsqError } from "../../wire/errors.js";

/**
 * An iterable job's saved state (`it-<jid>`) cannot be read: a cursor that is not JSON, a non-numeric
 * count. Retrying cannot help, so the job goes straight to the dead set; fix or delete the field, then
 * retry it from there.
 */
export class IterationStateError extends TsqError {
  override name = "IterationStateError";
}
