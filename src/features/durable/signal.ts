/**
 * `signal(event, data)`: wakes the durable jobs waiting on `event` (DurableJob#waitFor) and keeps the
 * data for jobs that start waiting later, from any process that can reach the Redis. A woken job is
 * pushed onto its queue by the same atomic step (durable-signal-5.lua), so it starts as soon as a worker
 * is free, not at the scheduled poller's next poll.
 */
import type { Redis } from "ioredis";
import { defaultClient } from "../../client/defaultClient.js";
import { ArgumentError } from "../../wire/errors.js";
import { DEFAULTS } from "../../platform/config/defaults.js";
import { MAX_DURATION_SECONDS } from "../../platform/util/longTimer.js";
import { formatTimestampJson, nowStamp, type TimestampFormat } from "../../wire/timestamps.js";
import { initialFormats } from "../../wire/sidekiqVersion.js";
import type { JsonValue } from "../../wire/payload.js";
import { wake } from "./parking.js";
import { activeDiversion, signalInMemory } from "./memory.js";

export interface SignalOptions {
  /** Seconds the signal is kept for waits that start later (default 7 days). */
  retention?: number;
  /** The Redis to signal on (default: the default client's). */
  redis?: Redis;
}

/** Seconds a signal is kept for later waits. */
export const SIGNAL_RETENTION = 7 * 24 * 60 * 60;

/** Resolves to how many parked jobs were woken (0 when none waits yet: the signal is kept for them). */
export async function signal(event: string, data: JsonValue = null, options: SignalOptions = {}): Promise<number> {
  if (typeof event !== "string" || event === "" || event.length > 500)
    throw new ArgumentError(
      `signal(event, data) needs an event name of 1 to 500 characters, got ${JSON.stringify(event)}`,
    );
  const retention = options.retention ?? SIGNAL_RETENTION;
  if (!Number.isInteger(retention) || retention < 1 || retention > MAX_DURATION_SECONDS)
    throw new ArgumentError(
      `signal's retention is whole seconds from 1 to ${MAX_DURATION_SECONDS} (10 years), got ${String(retention)}`,
    );
  const text = JSON.stringify(data);
  if (text === undefined) throw new ArgumentError(`signal("${event}", data): data must be JSON (got ${typeof data})`);
  const client = options.redis ? undefined : defaultClient();
  // tsq/testing's fake and inline modes: the parked jobs are in the test controller's memory.
  const diversion = client && activeDiversion(client);
  if (diversion) return signalInMemory(diversion, event, text);
  const redis = options.redis ?? client!.redis;
  // With client middleware, a due job must pass through it as the poller pushes it (Sidekiq re-pushes
  // scheduled jobs through the client): "" leaves the woken jobs due in `schedule` for the poller.
  const format: TimestampFormat = client?.timestampFormat ?? initialFormats(DEFAULTS.sidekiqVersion).timestamps;
  const enqueuedAt = client?.replaysScheduled ? "" : formatTimestampJson(nowStamp(format));
  return wake(redis, { event, data: text, retentionSeconds: retention, enqueuedAt });
}
