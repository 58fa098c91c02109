/**
 * What a Client's plug-ins announce about its pushes and the batches they feed: one emitter per
 * Client (`client.events`), so two clients in one process count apart. A worker's metrics listen on
 * its own client, through which its jobs push; an app listens on the clients it made.
 */
import { EventEmitter } from "node:events";
import type { JobPayload } from "../wire/payload.js";

export interface ClientEvents {
  /** A push was dropped as a duplicate: `holder` (a jid) already holds its deduplication lock. */
  deduplicated: [job: JobPayload, queue: string, holder: string];
  /** A push was refused: `holder` (a jid) holds its unique lock. */
  uniqueRejected: [job: JobPayload, queue: string, holder: string];
  /** A concurrency limit parked a pushed job (no slot free) or refused it (its parked list is full). */
  limited: [job: JobPayload, queue: string, action: "parked" | "refused"];
  /** A batch callback fired ("complete", "success", "death" or "settled"). */
  batchFired: [bid: string, event: string];
}

export type ClientEventBus = EventEmitter<ClientEvents>;

export function clientEventBus(): ClientEventBus {
  return new EventEmitter<ClientEvents>();
}
