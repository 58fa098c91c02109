/**
 * How a fetcher honours paused queues: paused names leave the key list of the next fetch; when every
 * queue is paused the fetcher waits for a change of the set (at most `ms`) instead of looping; and jobs a
 * fetch returns from a queue paused meanwhile (a wait already blocked in Redis when the pause was seen)
 * go straight back to the front of their queue, so no job is taken from a queue after its pause is seen.
 */
import type { PauseView } from "./PausedQueues.js";
import { sleep } from "../../platform/util/sleep.js";
import type { UnitOfWork } from "./unitOfWork.js";

/** The names of `queues` not paused, in the same order. */
export function unpausedQueues(queues: string[], paused: PauseView | undefined): string[] {
  if (!paused) return queues;
  const open = queues.filter((queue) => !paused.has(queue));
  return open.length === queues.length ? queues : open;
}

/**
 * Nothing to fetch from (every queue paused, or a plug-in's fetch order left them all out): wait for the
 * paused set to change, at most `ms` ms, or until `signal` aborts.
 */
export async function waitWhilePaused(paused: PauseView | undefined, ms: number, signal: AbortSignal): Promise<void> {
  if (!paused) return sleep(ms, signal);
  const stop = new AbortController();
  const cut = AbortSignal.any([signal, stop.signal]);
  await Promise.race([paused.changed(), sleep(ms, cut)]);
  stop.abort();
}

/**
 * `units` when their queue is open; otherwise they are put back (newest first, so the oldest is again
 * the next to pop) and the fetch returns nothing.
 */
export async function keepUnpaused(
  units: UnitOfWork[],
  paused: PauseView | undefined,
  requeue: (units: UnitOfWork[]) => Promise<void>,
): Promise<UnitOfWork[]> {
  if (!paused || units.length === 0 || !paused.has(units[0]!.queue)) return units;
  await requeue([...units].reverse());
  return [];
}
