/**
 * Cancellable waits: every sleeping loop (poller, heartbeat, fetch back-off) wakes at once on
 * quiet/stop, and no timer keeps the process alive after stop.
 */

import { SYSTEM_CLOCK, type Clock } from "./clock.js";

/** Resolves after `ms` milliseconds of `clock`, or at once when `signal` aborts. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = SYSTEM_CLOCK): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const cancel = clock.after(ms, done);
    function done(): void {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A promise that settles when `resolve` is called; for "wait until something changes". */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Resolves true when `work` settles within `ms` (or before `signal` aborts), false otherwise. The work
 * goes on in the background and its failure is ignored: the caller has already given up on it.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<boolean> {
  let settled = false;
  const watched = work.then(
    () => (settled = true),
    () => (settled = true),
  );
  if (ms <= 0 || signal?.aborted) {
    await Promise.resolve();
    return settled;
  }
  const stop = new AbortController();
  const abandon = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  await Promise.race([watched, sleep(ms, abandon)]);
  stop.abort();
  return settled;
}
