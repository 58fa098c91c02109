/**
 * What a Client's plug-ins announce about its pushes and the batches they feed: one emitter per
 * Client (`client.events`), so two clients in one process count apart. A worker's metrics listen on
 * its own client, through which its jobs push; an app listens on the clients it made.
 */
import { EventEmitter } from "node:events";

/**
 * The events of a Client. The core emits none: each feature declares its own from its plugin.ts by
 * augmenting this interface (`declare module "<path>/client/events.js" { interface ClientEvents { ... } }`)
 * and names them in its plug-in's `emits.client` (server/plugin.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- open for the features' augmentations
export interface ClientEvents {}

export type ClientEventBus = EventEmitter<ClientEvents>;

export function clientEventBus(): ClientEventBus {
  return new EventEmitter<ClientEvents>();
}
