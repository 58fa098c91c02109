/**
 * Failed writes to several shards as one error: any other failure wins; refusals by a plug-in's write
 * (PushRefusedError, such as a full parked list's, one per shard) merge into one of the first one's
 * class naming every refused job, and a bulk push reports the refused ones as null.
 */
import { PushRefusedError } from "../wire/errors.js";

export function oneFailure(errors: readonly Error[]): Error | undefined {
  const refused = errors.filter((error) => error instanceof PushRefusedError);
  const [first] = refused;
  if (refused.length < errors.length || first === undefined || refused.length === 1)
    return errors.find((e) => !refused.includes(e as never)) ?? first;
  return first.refusing(
    refused.map((error) => error.message).join("; "),
    refused.flatMap((error) => error.jids),
  );
}

/** Sets to null the results (jids, in push order) of the jobs `error` refused; the others were written. */
export function nullRefused(results: (string | null)[], error: PushRefusedError): void {
  results.forEach((jid, i) => {
    if (jid !== null && error.jids.includes(jid)) results[i] = null;
  });
}
