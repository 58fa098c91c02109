/**
 * A dropped duplicate is logged here (GitLab's DeduplicationLogger fields) and announced on the pushing
 * Client's events, which a worker's metrics count (`tsq_jobs_deduplicated_total`).
 */
import type { ClientEventBus } from "../../../client/events.js";
import { logger } from "../../../platform/logger.js";
import { displayClass, type JobPayload } from "../../../wire/payload.js";
import type { DedupPolicy } from "./policy.js";

export function reportDeduplicated(
  events: ClientEventBus,
  job: JobPayload,
  policy: DedupPolicy,
  existingJid: string,
): void {
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
  events.emit("deduplicated", job, job.queue, existingJid);
}
