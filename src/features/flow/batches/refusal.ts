/** The error a batch refusal becomes: what happened, and that nothing was pushed. */
import { TsqError } from "../../../wire/errors.js";

/** A batch the server refused to open or join (gone, already succeeded): nothing was pushed. */
export class BatchError extends TsqError {
  override name = "BatchError";
}

/** A script's refusal (NOBATCH, FINISHED, ...) as a BatchError; any other error unchanged. */
export function refused(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const match = /^(NOBATCH|FINISHED|NOPARENT|PARENTFINISHED) (.*)$/.exec(message);
  return match ? new BatchError(`${match[2]}; nothing was pushed`, { cause: error }) : error;
}
