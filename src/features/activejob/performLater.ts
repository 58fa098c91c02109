/**
 * Enqueues a Rails ActiveJob from TypeScript, writing what Rails 6.1's Sidekiq adapter writes (and
 * every later Rails reads), so a Rails process running Sidekiq executes it:
 *
 *   await performLater("GreetJob", ["bob", { count: 3 }], { keywords: true, queue: "mailers" });
 *   // Ruby runs GreetJob.new.perform("bob", count: 3)
 *
 *   immediate  LPUSH queue:<queue> {"class":"ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
 *              "wrapped":"GreetJob","queue":…,"args":[<job.serialize>],"retry":true,"jid":…,…}
 *   `wait`     ZADD schedule <run at> (the same job, without enqueued_at), as `set(wait:)` does
 *
 * The arguments are serialized as ActiveJob does (serialize.ts); anything it cannot represent is
 * rejected before Redis with an ArgumentError naming the value.
 */
import { randomUUID } from "node:crypto";
import { ArgumentError } from "../../wire/errors.js";
import type { Client } from "../../client/Client.js";
import { defaultClient } from "../../client/defaultClient.js";
import { scheduledAt } from "../../client/Job.js";
import { jobNameOf, type JobClassLike } from "../../client/options.js";
import { serializeArguments } from "./serialize.js";
import type { SIDEKIQ_WRAPPER } from "./wrapper.js";
import { LEGACY_WRAPPER } from "./wrapper.js";

export interface PerformLaterOptions {
  /** Queue name (ActiveJob's `queue_as`; default "default"). Rails' queue_name_prefix is not applied. */
  queue?: string;
  /** Seconds from now to run (`set(wait:)`); values >= 1e9 are epoch seconds. */
  wait?: number;
  /** When to run (`set(wait_until:)`): a Date or epoch seconds. Wins over `wait`. */
  waitUntil?: Date | number;
  /** ActiveJob priority (`set(priority:)`); the Sidekiq adapter stores it but does not order by it. */
  priority?: number;
  /** Send the last argument as Ruby keyword arguments: `perform(name, count: 3)`. */
  keywords?: boolean;
  /** I18n locale the job runs with (default "en"). */
  locale?: string;
  /** `Time.zone` name the job runs with, e.g. "UTC" (default null: the Rails app's own zone). */
  timezone?: string | null;
  /** ActiveJob's job_id (default: a random UUID). */
  jobId?: string;
  /** Sidekiq wrapper class: the classic name (default, understood by every Sidekiq) or Sidekiq 7.3+'s. */
  wrapper?: typeof LEGACY_WRAPPER | typeof SIDEKIQ_WRAPPER;
  /** Enqueue through this client instead of the default one. */
  client?: Client;
}

export interface Enqueued {
  /** The Sidekiq jid (Rails' provider_job_id), or null when a client middleware stopped the push. */
  jid: string | null;
  /** ActiveJob's job_id. */
  jobId: string;
}

/** Pushes one ActiveJob for a Rails process to run. `jobClass` is the Ruby class name, e.g. "Admin::ReportJob". */
export async function performLater(
  jobClass: string | JobClassLike,
  args: readonly unknown[],
  options: PerformLaterOptions = {},
): Promise<Enqueued> {
  const name = jobNameOf(jobClass);
  const where = `performLater(${name})`;
  if (name === "") throw new ArgumentError(`${where}: the job class name must not be empty`);
  const queue = options.queue ?? "default";
  if (typeof queue !== "string" || queue === "") throw new ArgumentError(`${where}: queue must be a non-empty string`);
  if (options.priority !== undefined && !Number.isInteger(options.priority)) {
    throw new ArgumentError(`${where}: priority must be an integer, got ${String(options.priority)}`);
  }
  const jobId = options.jobId ?? randomUUID();
  const serialized = {
    job_class: name,
    job_id: jobId,
    provider_job_id: null,
    queue_name: queue,
    priority: options.priority ?? null,
    arguments: serializeArguments(args, options.keywords === true, where),
    executions: 0,
    exception_executions: {},
    locale: options.locale ?? "en",
    timezone: options.timezone ?? null,
    // `Time.now.utc.iso8601`: whole seconds, as Rails 6.1 writes it.
    enqueued_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
  const when = options.waitUntil ?? options.wait;
  const at = when === undefined ? undefined : scheduledAt(when);
  const client = options.client ?? defaultClient();
  const jid = await client.push({
    class: options.wrapper ?? LEGACY_WRAPPER,
    wrapped: name,
    queue,
    args: [serialized],
    ...(at === undefined ? {} : { at }),
  });
  return { jid, jobId };
}
