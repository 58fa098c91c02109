/**
 * The identity of a duplicate, GitLab's `idempotency_key`: SHA-256 hex of `"<Class>:<JSON args>"`
 * (or of `idempotencyArguments(args)`), per queue. The payload carries the whole lock key in
 * `idempotency_key`, so the paths that remove a job (the API, recovery) can release its lock without
 * loading the job's class; the field is trusted only if it names a dedup lock (keys.ts `lockIdOf`).
 */
import { createHash } from "node:crypto";
import { lockIdOf, lockKey } from "../../../wire/keys.js";
import type { JobPayload } from "../../../wire/payload.js";
import type { DedupPolicy } from "./policy.js";

/** `<queue>:<64 hex>`, the id of the job's dedup lock. */
export function dedupId(job: JobPayload, policy: DedupPolicy): string {
  const args = policy.idempotencyArguments ? policy.idempotencyArguments(job.args) : job.args;
  const hash = createHash("sha256")
    .update(`${job.class}:${JSON.stringify(args)}`)
    .digest("hex");
  return `${job.queue}:${hash}`;
}

export function dedupLockKey(id: string): string {
  return lockKey("dedup", id);
}

/** The dedup lock id a stored job names in `idempotency_key`, if it names one. */
export function dedupIdOfPayload(job: { idempotency_key?: unknown; [field: string]: unknown }): string | undefined {
  return typeof job.idempotency_key === "string" ? lockIdOf("dedup", job.idempotency_key) : undefined;
}
