/**
 * Process-wide deduplication events: a dropped duplicate is logged here (GitLab's DeduplicationLogger
 * fields) and announced to the process's metrics (`tsq_jobs_deduplicated_total`). Pushes happen in any
 * process that has a Client, so this is not tied to a worker's context.
 */
import { EventEmitter } from "node:events";
import { logger } from "../../../platform/logger.js";
import { displayClass, type JobPayload } from "../../../wire/payload.js";
import type { DedupPolicy } from "./policy.js";

export interface DedupEvents {
  /** A push was dropped: `existingJid` already holds the lock. */
  deduplicated: [job: JobPayload, queue: string, existingJid: string];
  /** A job ran once more because a duplicate was dropped while it ran (reschedule_once). */
  rescheduled: [job: JobPayload, queue: string];
}

export const dedupEvents = new EventEmitter<DedupEvents>();

export function reportDeduplicated(job: JobPayload, policy: DedupPolicy, existingJid: string): void {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(policy.options))
    if (value !== undefined) options[`deduplication.options.${key}`] = value;
  logger().info(
    {
      class: displayClass(job),
      jid: job.jid,
      queue: job.queue,
      job_status: "deduplicated",
      "duplicate-of": existingJid,
      idempotency_key: job.idempotency_key,
      "deduplication.type": policy.strategy,
      ...options,
    },
    `${displayClass(job)} JID-${job.jid}: deduplicated: ${policy.strategy}`,
  );
  dedupEvents.emit("deduplicated", job, job.queue, existingJid);
}
