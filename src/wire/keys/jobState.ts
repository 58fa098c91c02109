/**
 * State kept for single jobs: an iterable job's cursor, a durable job's journal and the signals and
 * cancels it waits on, and job outcomes. Reached through src/wire/keys.ts, whose header maps every key.
 */

export const DURABLE_PREFIX = "tsq:durable:";

/** A durable job's journal of steps, sleeps and waits (src/features/durable). */
export function durableKey(jid: string): string {
  return `${DURABLE_PREFIX}${jid}`;
}

/** The last signal sent to `event`, kept so a job that waits later still gets it. */
export function durableSignalKey(event: string): string {
  return `${DURABLE_PREFIX}signal:${event}`;
}

/** The jobs parked on `event`: jid -> payload. */
export function durableWaitersKey(event: string): string {
  return `${DURABLE_PREFIX}waiters:${event}`;
}

/**
 * Parked durable jobs by jid, scored by deadline or wake time (epoch s), so `tsq_durable_waiting` and
 * `tsq_durable_sleeping` are one ZCOUNT each; entries whose time has passed are stale and not counted.
 */
export const DURABLE_WAITING_INDEX = `${DURABLE_PREFIX}index:waiting`;
export const DURABLE_SLEEPING_INDEX = `${DURABLE_PREFIX}index:sleeping`;

/** The pub/sub channel every tsq process reads cancels from, for a job whose owner is not known yet. */
export const CANCEL_BROADCAST = "tsq:cancel";

/** The pub/sub channel a tsq process reads cancels of its running jobs from. */
export function cancelChannel(identity: string): string {
  return `tsq:cancel:${identity}`;
}

/** An iterable job's saved state, Sidekiq 7.3's `it-<jid>` (src/features/iterable). */
export function iterationKey(jid: string): string {
  return `it-${jid}`;
}

/** Job outcomes (src/features/outcomes): the capped stream of ends, a completion event per entry. */
export const OUTCOMES = "tsq:outcomes";

/** An opted-in job's last outcome (STRING, JSON, with the class's `result.ttl`). */
export function resultKey(jid: string): string {
  return `tsq:result:${jid}`;
}
