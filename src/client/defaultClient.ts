/**
 * The process-wide client used by `Job.performAsync` and friends outside a job: the one the app sets at
 * boot with `configureClient` (the package's, src/library/Client.ts: every built-in feature unless told
 * otherwise), or the one a worker that is the whole process sets (the `tsq` CLI, a `tsq-cluster` child,
 * startTestWorker). Without either it is created on first use from REDIS_URL with the plug-ins set at
 * boot (client/defaultPlugins.ts), which is none unless the process set a list: it says so once, since
 * features the app's classes declare (unique jobs, deduplication, concurrency limits, batches) would
 * not apply to its pushes. Nothing is set by importing the package.
 */
import { currentJobScope, logger } from "../platform/logger.js";
import { Client, type ClientOptions } from "./Client.js";
import { defaultPlugins } from "./defaultPlugins.js";

let current: Client | undefined;

export function defaultClient(): Client {
  // A job enqueues through its own worker's client (the worker puts it in the job's scope).
  const own = jobClient();
  if (own) return own;
  current ??= lazyDefault();
  return current;
}

/** The client of the worker running the current job; undefined outside a job. */
export function jobClient(): Client | undefined {
  const own = currentJobScope()?.client;
  return own instanceof Client ? own : undefined;
}

/** True when a default client is set or was made (tsq/testing installs its mode on one it configures). */
export function hasDefaultClient(): boolean {
  return current !== undefined;
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

/** Lazy: a test in fake or inline mode (tsq/testing) never connects. */
function lazyDefault(): Client {
  if (defaultPlugins() === undefined)
    logger().warn(
      "tsq: no default client was configured, so Job.performAsync and friends push through one made now " +
        "from REDIS_URL with no plug-in: the features a class declares (unique jobs, deduplication, " +
        "concurrency limits, batches, expiry) do not apply to these pushes. Call configureClient() once at " +
        "boot for every built-in feature, or configureClient({ plugins: [] }) for plain Sidekiq pushes.",
    );
  return new Client({ lazyConnect: true });
}
