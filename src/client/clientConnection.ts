/** The connection a Client opens to each Redis it writes to (its home one, and one per other shard). */
import { connect, type TsqRedis } from "../platform/redis/connection.js";

export interface ClientConnectionSettings {
  /** Connect at the first command rather than at once (`lazyConnect`, unless writes are held). */
  readonly lazy: boolean;
  /** True when a plug-in's write path (reliable push) holds writes while Redis is away. */
  readonly holdsWrites: boolean;
  /** ms a command may take (`commandTimeoutMs`); undefined: no limit. */
  readonly commandTimeoutMs: number | undefined;
}

export function openClientConnection(url: string, settings: ClientConnectionSettings): TsqRedis {
  // No auto-pipelining: a push is one command (push-jobs-2.lua) and pushes in flight already share
  // the socket; a pipeline per tick doubled the CPU of a push awaited alone (npm run bench:push).
  return connect(url, {
    name: "tsq-client",
    autoPipelining: false,
    ...(settings.lazy ? { lazy: true } : {}),
    // Reliable push holds a push made while Redis is away instead of letting it wait in ioredis.
    ...(settings.holdsWrites ? { offlineQueue: false } : {}),
    ...(settings.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: settings.commandTimeoutMs }),
  });
}
