/**
 * Keeps a workflow step's return value for the steps after it (`this.workflow.results()`), inside the
 * batch middleware so the result is stored before the step's success can start the next stage.
 * A result is JSON, at most MAX_RESULT_BYTES (a bigger one is stored as {"tsq_error": "..."}); the
 * hash expires with the workflow.
 */
import type { Next } from "../../middleware/Chain.js";
import type { JobPayload } from "../../payload.js";
import type { TsqRedis } from "../../redis/connection.js";
import { workflowKey } from "../../keys.js";
import { batchSettings } from "../settings.js";

/** Bytes of one stored result (64 KB): results are for handing small values on, not bulk data. */
export const MAX_RESULT_BYTES = 65_536;

export interface WorkflowHandle {
  readonly id: string;
  /** Every step result stored so far: step name -> value. */
  results(): Promise<Record<string, unknown>>;
}

export class WorkflowResultMiddleware {
  constructor(private readonly redis: TsqRedis) {}

  async call(instance: object, job: JobPayload, _queue: string, next: Next): Promise<void> {
    const id = job.tsq_wf;
    const name = job.tsq_wf_step;
    if (typeof id !== "string" || typeof name !== "string") return next();
    const redis = this.redis;
    const handle: WorkflowHandle = {
      id,
      async results() {
        const stored = await redis.hgetall(workflowKey(id, "results"));
        return Object.fromEntries(Object.entries(stored).map(([step, json]) => [step, JSON.parse(json) as unknown]));
      },
    };
    const target = instance as { perform: (...args: unknown[]) => unknown; workflow?: WorkflowHandle };
    target.workflow = handle;
    // The Processor calls `instance.perform` after the chain; an own property wrapping the class's
    // method is how the return value reaches this middleware.
    let result: unknown = null;
    const perform = target.perform;
    target.perform = async (...args: unknown[]) => {
      result = await perform.apply(instance, args);
      return result;
    };
    await next();
    let json = JSON.stringify(result ?? null);
    if (Buffer.byteLength(json) > MAX_RESULT_BYTES)
      json = JSON.stringify({ tsq_error: `result larger than ${MAX_RESULT_BYTES} bytes; not stored` });
    const key = workflowKey(id, "results");
    const ttl = await redis.pttl(workflowKey(id));
    const ms = ttl > 0 ? ttl : batchSettings().expiresIn * 1000;
    await redis.multi().hset(key, name, json).pexpire(key, ms).exec();
  }
}
