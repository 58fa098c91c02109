/** The named errors of job outcomes. */
import { TsqError } from "../../wire/errors.js";

/** `waitUntilFinished` saw no end of the job within its `timeout`. */
export class WaitTimeoutError extends TsqError {
  override name = "WaitTimeoutError";
  constructor(
    readonly jid: string,
    readonly timeoutSeconds: number,
  ) {
    super(
      `job ${jid} did not finish within ${timeoutSeconds} s (waitUntilFinished): it may still be queued or ` +
        "running, or its class does not record outcomes (`static options = { result: { ttl } }`); " +
        "wait longer or check it in the dashboard",
    );
  }
}
