/**
 * The write half of a Client, one per Redis it pushes to (one per shard, src/platform/shards): prepared jobs go
 * out in one pipelined round trip, through a plug-in's write path when one has it (reliable push), with batch members
 * joined first (plug-ins' `beforeWrite`). A failover error reconnects and retries once. Jobs a plug-in
 * claimed (`alternateWrite`: concurrency admission) are written by it instead of LPUSHed.
 */
import { EnqueueError, PushRefusedError } from "../wire/errors.js";
import type { AlternateWrite, ClientHooks, PreparedJob, UndoWrite, WritePath } from "./plugin.js";
import { QUEUES, SCHEDULE, queueKey } from "../wire/keys.js";
import type { JobPayload } from "../wire/payload.js";
import { isFailoverError, type TsqRedis } from "../platform/redis/connection.js";
import { explainRedisError } from "../platform/redis/errors.js";
import { formatSeconds } from "../wire/timestamps.js";
import { pushJobsLua } from "./scripts.js";

export class JobWriter {
  /** A plug-in's write path (reliable push), if any. */
  private readonly path: WritePath | undefined;
  private readonly beforeWrite: NonNullable<ClientHooks["beforeWrite"]>[];
  private readonly alternates: AlternateWrite[];

  /** `owned`: close() closes the connection too. */
  constructor(
    readonly redis: TsqRedis,
    private readonly owned: boolean,
    hooks: readonly ClientHooks[],
  ) {
    this.beforeWrite = hooks.flatMap((hook) => (hook.beforeWrite ? [hook.beforeWrite.bind(hook)] : []));
    this.alternates = hooks.flatMap((hook) => (hook.alternateWrite ? [hook.alternateWrite] : []));
    const pathHook = hooks.find((hook) => hook.writePath);
    this.path = pathHook?.writePath?.(
      redis,
      (entries) => this.rawPush(entries),
      (job) =>
        this.alternates.flatMap((alternate) => (alternate.owns(job) ? (alternate.landingLists?.(job) ?? []) : [])),
    );
  }

  /** Jobs held in memory by a write path (reliable push), waiting for Redis. */
  get buffered(): number {
    return this.path?.heldJobs ?? 0;
  }

  async write(entries: PreparedJob[]): Promise<void> {
    // Batch members join before the write, so none can finish before its batch knows it. Synchronous
    // (no tick) when no plug-in has anything to do for these jobs.
    let undo: UndoWrite[] | undefined;
    if (this.beforeWrite.length > 0) {
      const jobs = entries.map((e) => e.job);
      for (const before of this.beforeWrite) {
        const pending = before(this.redis, jobs);
        if (pending) (undo ??= []).push(await pending);
      }
    }
    try {
      await (this.path ? this.path.push(entries) : this.rawPush(entries));
    } catch (error) {
      // Refused by a plug-in's write (a full parked list): only those jobs were not written.
      const jids = error instanceof PushRefusedError ? error.jids : undefined;
      for (const step of undo ?? []) await step(jids);
      throw error;
    }
  }

  /** Lets a write path's held jobs land, then closes the connection if this writer opened it. */
  async close(): Promise<void> {
    await this.path?.close();
    if (this.owned) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async rawPush(entries: PreparedJob[]): Promise<void> {
    try {
      try {
        await this.writeOnce(entries);
      } catch (error) {
        if (!isFailoverError(error)) throw error;
        this.redis.disconnect(true);
        await this.writeOnce(entries);
      }
    } catch (error) {
      if (error instanceof PushRefusedError) throw error; // it names the jobs and what to do
      throw refused(entries, error);
    }
  }

  private async writeOnce(entries: PreparedJob[]): Promise<void> {
    if (this.alternates.length === 0) return this.writePlain(entries);
    const claimed = this.alternates.map((alternate) => entries.filter((entry) => alternate.owns(entry.job)));
    if (claimed.every((list) => list.length === 0)) return this.writePlain(entries);
    const plain = entries.filter((entry) => !this.alternates.some((alternate) => alternate.owns(entry.job)));
    // All sent before any is answered; every write settles before a failure is reported.
    const outcomes = await Promise.allSettled([
      plain.length > 0 ? this.writePlain(plain) : undefined,
      ...claimed.map((list, i) => (list.length > 0 ? this.alternates[i]!.write(this.redis, list) : undefined)),
    ]);
    for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
  }

  private async writePlain(entries: PreparedJob[]): Promise<void> {
    if (entries.length === 1 && entries[0]!.job.at === undefined) {
      // One job, as performAsync pushes it: one push-jobs-2.lua call. Two commands per push (SADD,
      // LPUSH) in a pipeline of their own cost half the throughput with many pushes in flight.
      const { job, json } = entries[0]!;
      await pushJobsLua.run(this.redis, QUEUES, queueKey(job.queue), job.queue, json);
      return;
    }
    const pipeline = this.redis.pipeline();
    const scored: string[] = [];
    const byQueue = new Map<string, string[]>();
    for (const { job, json } of entries) {
      if (job.at !== undefined) {
        scored.push(formatSeconds(job.at), json);
        continue;
      }
      const list = byQueue.get(job.queue) ?? [];
      list.push(json);
      byQueue.set(job.queue, list);
    }
    if (scored.length > 0) pipeline.zadd(SCHEDULE, ...scored);
    if (byQueue.size > 0) {
      pipeline.sadd(QUEUES, ...byQueue.keys());
      for (const [queue, jsons] of byQueue) pipeline.lpush(queueKey(queue), ...jsons);
    }
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}

/** A Redis refusal as an error that says what it means, what to do, and that nothing was enqueued. */
function refused(entries: { job: JobPayload }[], error: unknown): EnqueueError {
  const first = entries[0]!.job;
  const what =
    entries.length === 1 ? `job ${first.class} (jid ${first.jid})` : `${entries.length} jobs of ${first.class}`;
  const problem = explainRedisError(error);
  return new EnqueueError(
    `${what} was not enqueued: Redis refused the write: ${problem.advice} (Redis said: ${problem.reply})`,
    { cause: error },
  );
}
