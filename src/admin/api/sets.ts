/**
 * The three sorted sets by name, as `Sidekiq::ScheduledSet`, `RetrySet` and `DeadSet`.
 */
import type { Redis } from "ioredis";
import { DEAD, RETRY, SCHEDULE } from "../../wire/keys.js";
import { JobSet, type JobSetOptions } from "./JobSet.js";
import type { KillOptions } from "./SortedEntry.js";

/** Jobs pushed with `performIn` / `performAt`, scored by when they are due. */
export class ScheduledSet extends JobSet {
  constructor(redis: Redis, options: JobSetOptions = {}) {
    super(redis, SCHEDULE, options);
  }
}

/** Failed jobs waiting for their next attempt, scored by when it is due. */
export class RetrySet extends JobSet {
  constructor(redis: Redis, options: JobSetOptions = {}) {
    super(redis, RETRY, options);
  }
}

/** Jobs that ran out of retries or were killed, scored by when they died. */
export class DeadSet extends JobSet {
  constructor(redis: Redis, options: JobSetOptions = {}) {
    super(redis, DEAD, options);
  }

  /**
   * Adds a job's text to the dead set and trims it (`DeadSet#kill`). Death handlers run only when
   * given: unlike Sidekiq's API, this one has no process-wide handler list.
   */
  async kill(value: string, options: KillOptions = {}): Promise<void> {
    await this.morgue(value, options);
  }
}
