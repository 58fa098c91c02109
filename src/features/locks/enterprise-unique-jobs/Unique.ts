/**
 * `Unique.locked(klass, args)`: is a job with these arguments holding its unique lock right now?
 * Enterprise's `Sidekiq::Enterprise::Unique.locked?` — advisory only ("IS RACY"): a push made after the
 * answer may still be refused or accepted. The args are taken in their JSON round-trip form, as they are
 * on the wire, so `new Date()` and `undefined` compare as their JSON does.
 */
import { defaultClient } from "../../../client/defaultClient.js";
import { jobNameOf, wireOptions, type JobClassLike } from "../../../client/options.js";
import { ArgumentError } from "../../../wire/errors.js";
import { inspectLock } from "../Lock.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { uniqueLockKey } from "./digest.js";
import { uniquePolicyOf } from "./policy.js";

export interface LockedOptions {
  /** The queue the job would be pushed to (default: the class's `options.queue`, then "default"). */
  queue?: string;
  /** Default: the default client's connection. */
  redis?: TsqRedis;
}

export const Unique = {
  /** True while a job of `klass` with `args` holds its lock (queued, scheduled, retrying or running). */
  async locked(klass: JobClassLike, args: unknown[], options: LockedOptions = {}): Promise<boolean> {
    return (await this.holder(klass, args, options)) !== undefined;
  },

  /** The jid holding the lock of `klass` with `args`, if any. */
  async holder(klass: JobClassLike, args: unknown[], options: LockedOptions = {}): Promise<string | undefined> {
    const policy = uniquePolicyOf(klass);
    const name = jobNameOf(klass);
    if (policy === undefined)
      throw new ArgumentError(`Unique.locked: ${name} is not a unique job class; give it static options { uniqueFor }`);
    const declared = wireOptions(klass.options).queue;
    const queue = options.queue ?? (typeof declared === "string" ? declared : "default");
    const wire = JSON.parse(JSON.stringify(args)) as unknown[];
    const key = uniqueLockKey({ class: name, queue, args: wire }, policy);
    const holds = await inspectLock(options.redis ?? defaultClient().redis, key);
    return holds[0]?.holder;
  },
};
