/**
 * The process-wide client used by `Job.performAsync` and friends. Created lazily from REDIS_URL;
 * `configureClient` replaces it (the worker points it at its own Redis so jobs can enqueue jobs).
 */
import { currentJobScope } from "../platform/logger.js";
import { Client, type ClientOptions } from "./Client.js";

let current: Client | undefined;

export function defaultClient(): Client {
  // A job enqueues through its own worker's client (the worker puts it in the job's scope).
  const own = currentJobScope()?.client;
  if (own instanceof Client) return own;
  // Lazy: a test in fake or inline mode (tsq/testing) never connects.
  current ??= new Client({ lazyConnect: true });
  return current;
}

/** Replaces the default client. The previous one is closed if it owned its connection. */
export function configureClient(options: ClientOptions | Client): Client {
  const previous = current;
  current = options instanceof Client ? options : new Client(options);
  // tsq/testing's mode stays with the default client when the app replaces it.
  if (previous?.diversion && current.diversion === undefined) current.divert(previous.diversion);
  if (previous && previous !== current) void previous.close();
  return current;
}

/** Closes the default client's connection, so a script can exit. */
export async function closeDefaultClient(): Promise<void> {
  const client = current;
  current = undefined;
  await client?.close();
}
