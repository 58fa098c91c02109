/** Every Redis key the audit trail writes (none elsewhere). */

/** LIST of JSON entries, newest first, trimmed to `auditTrailMaxLength`. */
export const TRAIL = "audit:trail";

/** STRING holding a held job's worker identity, from its first start until it is done or dead. */
export const holdKey = (jid: string): string => `audit:hold:${jid}`;

/** Seconds a hold outlives a worker that died holding it (a day: longer than any retry gap we run). */
export const HOLD_SECONDS = 86_400;
