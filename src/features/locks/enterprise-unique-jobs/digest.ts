/**
 * The identity of a unique job: SHA-256 hex of the JSON of its context, by default
 * `[class, queue, ...args]` (Enterprise keys on "(class, args, queue)"), or whatever the class's
 * `uniqueContext(args, job)` returns. As in Enterprise, a custom context replaces the whole default: one
 * that leaves out the class or the queue makes jobs of several classes or queues share a lock (Ent #6881).
 *
 * Enterprise hashes private bytes (SHA1 hex before 8.0, SHA256 base64 since), so its `unique:<digest>`
 * keys cannot be reproduced; tsq's locks live under `tsq:lock:unique:` and are tsq's own.
 */
import { createHash } from "node:crypto";
import { lockKey } from "../../../wire/keys.js";
import type { UniquePolicy } from "./policy.js";

export interface UniqueSubject {
  class: string;
  queue: string;
  args: unknown[];
  [field: string]: unknown;
}

/** `tsq:lock:unique:<64 hex>`, the key of the job's unique lock. */
export function uniqueLockKey(job: UniqueSubject, policy: UniquePolicy): string {
  const context = policy.context ? policy.context(job.args, job) : [job.class, job.queue, ...job.args];
  const text = JSON.stringify(context);
  if (text === undefined)
    throw new TypeError(`uniqueContext of ${job.class} returned ${String(context)}; return an array of JSON values`);
  return lockKey("unique", createHash("sha256").update(text).digest("hex"));
}
