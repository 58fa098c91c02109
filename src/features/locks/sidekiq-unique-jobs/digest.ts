/**
 * sidekiq-unique-jobs' lock digest (`lock_digest.rb`, the same in v7, v8 and v9's `:legacy` algorithm):
 *
 *   "#{lock_prefix}:" + MD5.hexdigest(JSON.generate(item.slice("class", "queue", "lock_args", "apartment").sort))
 *
 * e.g. the JSON hashed for `MyJob.perform_async(1, "a")` on "default":
 *   [["class","MyJob"],["lock_args",[1,"a"]],["queue","default"]]
 *
 * `unique_across_queues` drops "queue", `unique_across_workers` drops "class". The JSON is Ruby's
 * (rubyJson.ts): `rubyFloat(1)` and bigints say what JavaScript numbers cannot.
 */
import { createHash } from "node:crypto";
import { rubyJson } from "./rubyJson.js";

export interface DigestSubject {
  class: string;
  queue: string;
  lock_args: unknown;
  /** The apartment gem's tenant, when a Ruby app sets it. */
  apartment?: unknown;
  unique_across_queues?: unknown;
  unique_across_workers?: unknown;
}

/** The gem's default `lock_prefix`. */
export const DEFAULT_LOCK_PREFIX = "uniquejobs";

/** The text hashed: the sorted [field, value] pairs of the digestable slice, as Ruby writes them. */
export function digestInput(item: DigestSubject): string {
  const pairs: [string, unknown][] = [];
  // Sorted by name, as Ruby sorts the pairs (names are distinct, so values never decide).
  if (item.apartment !== undefined) pairs.push(["apartment", item.apartment]);
  if (item.unique_across_workers !== true) pairs.push(["class", item.class]);
  pairs.push(["lock_args", item.lock_args]);
  if (item.unique_across_queues !== true) pairs.push(["queue", item.queue]);
  return rubyJson(pairs);
}

/** `<prefix>:<md5 hex>`, the job's `lock_digest`. */
export function lockDigest(item: DigestSubject, prefix = DEFAULT_LOCK_PREFIX): string {
  return `${prefix}:${createHash("md5").update(digestInput(item), "utf8").digest("hex")}`;
}
