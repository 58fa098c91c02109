/**
 * A workflow step's return value, kept for the steps after it (`this.workflow.results()`). A result is
 * JSON, at most MAX_RESULT_BYTES (a bigger one is stored as {"tsq_error": "..."}); the hash expires
 * with the workflow.
 */
import type { JobPayload } from "../../../../wire/payload.js";
import type { TsqRedis } from "../../../../platform/redis/connection.js";
import { workflowKey } from "../../../../wire/keys.js";
import { batchSettings } from "../settings.js";

/** Bytes of one stored result (64 KB): results hand small values on, not bulk data. */
export const MAX_RESULT_BYTES = 65_536;

export interface WorkflowHandle {
  readonly id: string;
  /** Every step result stored so far: step name -> value. */
  results(): Promise<Record<string, unknown>>;
}

export interface WorkflowStep {
  id: string;
  name: string;
  result: unknown;
}

/**
 * For a workflow step: sets `this.workflow` and wraps `perform` to catch its return value (the Processor
 * calls `instance.perform` after the chain, so an own property wrapping the class's method sees it).
 */
export function captureResult(redis: TsqRedis, instance: object, job: JobPayload): WorkflowStep | undefined {
  const id = job.tsq_wf;
  const name = job.tsq_wf_step;
  if (typeof id !== "string" || typeof name !== "string") return undefined;
  const step: WorkflowStep = { id, name, result: null };
  const handle: WorkflowHandle = {
    id,
    async results() {
      const stored = await redis.hgetall(workflowKey(id, "results"));
      return Object.fromEntries(Object.entries(stored).map(([key, json]) => [key, JSON.parse(json) as unknown]));
    },
  };
  const target = instance as { perform: (...args: unknown[]) => unknown; workflow?: WorkflowHandle };
  target.workflow = handle;
  const perform = target.perform;
  target.perform = async (...args: unknown[]) => {
    step.result = await perform.apply(instance, args);
    return step.result;
  };
  return step;
}

export async function storeResult(redis: TsqRedis, step: WorkflowStep): Promise<void> {
  let json = JSON.stringify(step.result ?? null);
  if (Buffer.byteLength(json) > MAX_RESULT_BYTES)
    json = JSON.stringify({ tsq_error: `result larger than ${MAX_RESULT_BYTES} bytes; not stored` });
  const key = workflowKey(step.id, "results");
  const ttl = await redis.pttl(workflowKey(step.id)); // ms
  const ms = ttl > 0 ? ttl : batchSettings().expiresIn * 1000;
  await redis.multi().hset(key, step.name, json).pexpire(key, ms).exec();
}
