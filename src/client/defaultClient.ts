/**
 * The process-wide client used by `Job.performAsync` and friends. Created lazily from REDIS_URL;
 * `configureClient` replaces it (the worker points it at its own Redis so jobs can enqueue jobs).
 */
import { Client, type ClientOptions } from "./Client.js";

let current: Client | undefined;

export function defaultClient(): Client {
  current ??= new Client();
  return current;
}

/** Replaces the default client. The previous one is closed if it owned its connection. */
export function configureClient(options: ClientOptions | Client): Client {
  const previous = current;
  current = options instanceof Client ? options : new Client(options);
  if (previous && previous !== current) void previous.close();
  return current;
}

/** Closes the default client's connection, so a script can exit. */
export async function closeDefaultClient(): Promise<void> {
  const client = current;
  current = undefined;
  await client?.close();
}
