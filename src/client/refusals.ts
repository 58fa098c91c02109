/**
 * Failed writes to several shards as one error: any other failure wins; refusals by full parked lists
 * (ConcurrencyLimitFullError, one per shard) merge into one naming every refused job, and a bulk push
 * reports the refused ones as null.
 */
import { ConcurrencyLimitFullError } from "../wire/errors.js";

export function oneFailure(errors: readonly Error[]): Error | undefined {
  const full = errors.filter((error) => error instanceof ConcurrencyLimitFullError);
  if (full.length < errors.length || full.length <= 1) return errors.find((e) => !full.includes(e as never)) ?? full[0];
  return new ConcurrencyLimitFullError(
    full.map((error) => error.message).join("; "),
    full.flatMap((error) => error.jids),
  );
}

/** Sets to null the results (jids, in push order) of the jobs `error` refused; the others were written. */
export function nullRefused(results: (string | null)[], error: ConcurrencyLimitFullError): void {
  results.forEach((jid, i) => {
    if (jid !== null && error.jids.includes(jid)) results[i] = null;
  });
}
