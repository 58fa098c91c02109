/** The named errors of job outcomes. */
import { TsqError } from "../../wire/errors.js";

/** `waitUntilFinished` saw no end of the job within its `timeout`. */
export class WaitTimeoutError extends TsqError {
  override name = "WaitTimeoutError";
  constructor(
    readonly jid: string,
    readonly timeoutSeconds: number,
    /** True when, waiting with `final: true`, the job's last end seen was a failure with a retry pending. */
    readonly retryPending = false,
  ) {
    super(
      retryPending
        ? `job ${jid} did not end for good within ${timeoutSeconds} s (waitUntilFinished, final: true): its ` +
            "last attempt failed and a retry is pending (see the Retries page; retries back off for minutes " +
            "to hours); wait longer, or wait without `final` for each attempt's end"
        : `job ${jid} did not finish within ${timeoutSeconds} s (waitUntilFinished): it may still be queued or ` +
            "running, or its class does not record outcomes (`static options = { result: { ttl } }`); " +
            "wait longer or check it in the dashboard",
    );
  }
}
