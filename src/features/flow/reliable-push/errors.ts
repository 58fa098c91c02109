/** Reliable push's own error. */
import { TsqError } from "../../../wire/errors.js";

/**
 * Reliable push's in-memory buffer is full while Redis is unreachable: this job was not enqueued (jobs
 * buffered before it still are). Raise `reliablePush.maxBuffered`, or retry once Redis is back.
 */
export class PushBufferFullError extends TsqError {
  override name = "PushBufferFullError";
}
