/**
 * Process-wide unique-job events: a refused push is logged here, with the jid holding the lock as
 * Enterprise logs it ("not unique (lock held by JID …)", Ent #5736), and announced to the process's
 * metrics (`tsq_jobs_unique_rejected_total`). Pushes happen in any process that has a Client, so this is
 * not tied to a worker's context.
 */
import { EventEmitter } from "node:events";
import { logger } from "../../../platform/logger.js";
import { displayClass, type JobPayload } from "../../../wire/payload.js";

export interface UniqueEvents {
  /** A push was refused: `holder` holds the job's unique lock. */
  rejected: [job: JobPayload, queue: string, holder: string];
}

export const uniqueEvents = new EventEmitter<UniqueEvents>();

export function reportRejected(job: JobPayload, holder: string): void {
  const klass = displayClass(job);
  logger().info(
    {
      class: klass,
      jid: job.jid,
      queue: job.queue,
      job_status: "not_unique",
      lock_holder: holder,
      tsq_unique_key: job.tsq_unique_key,
      unique_for: job.unique_for,
    },
    `Skipping enqueue for ${klass} JID-${job.jid}, not unique (lock held by JID ${holder})`,
  );
  uniqueEvents.emit("rejected", job, job.queue, holder);
}
