/**
 * A refused push is logged here, with the jid holding the lock as Enterprise logs it ("not unique (lock
 * held by JID …)", Ent #5736), and announced on the pushing Client's events, which a worker's metrics
 * count (`tsq_jobs_unique_rejected_total`).
 */
import type { ClientEventBus } from "../../../client/events.js";
import { logger } from "../../../platform/logger.js";
import { displayClass, type JobPayload } from "../../../wire/payload.js";

export function reportRejected(events: ClientEventBus, job: JobPayload, holder: string): void {
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
  events.emit("uniqueRejected", job, job.queue, holder);
}
