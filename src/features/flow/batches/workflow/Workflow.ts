/**
 * Workflows on top of batches: each stage is a batch whose callbacks (WorkflowStep jobs) start the next
 * stage, so a chain survives any worker's death the way a batch does.
 *
 *   const flow = await workflow([Fetch, [Part1, Part2, Part3], Merge], { onChildFailure: "fail" });
 *   await Workflow.status(flow.id)   // { state: "running" | "succeeded" | "completed" | "failed", ... }
 *
 * A step's return value is stored under its name (`this.workflow.results()` in later steps). When a step
 * dies, the `onChildFailure` policy decides, and no policy leaves the workflow waiting forever:
 *
 *   fail      (default) the workflow ends "failed" at the first death; later stages never start
 *   ignore    the stage goes on until every step succeeded or died, then the next stage starts; the
 *             workflow ends "completed" (some results missing) instead of "succeeded"
 *   continue  the next stage starts at once at the first death (or when the stage settles)
 *
 * Stage batches, block tokens and step jids are derived from the workflow id and stage number, so a
 * WorkflowStep re-run after a SIGKILL reopens and seals the same stage instead of starting another.
 */
import { createHash, randomBytes } from "node:crypto";
import { ArgumentError } from "../../../../wire/errors.js";
import type { Client } from "../../../../client/Client.js";
import { defaultClient } from "../../../../client/defaultClient.js";
import { workflowKey } from "../../../../wire/keys.js";
import type { TsqRedis } from "../../../../platform/redis/connection.js";
import { nowSeconds } from "../../../../wire/timestamps.js";
import { Batch } from "../Batch.js";
import { batchSettings, positive } from "../settings.js";
import { FAILURE_POLICIES, parseStages, type FailurePolicy, type StageLike, type StoredStep } from "./definition.js";
import { WORKFLOW_STEP } from "./names.js";

export interface WorkflowOptions {
  onChildFailure?: FailurePolicy;
  description?: string;
  /** Queue of the internal WorkflowStep jobs (default "default"). */
  queue?: string;
  /** Seconds the workflow and its stages stay readable once finished (default TSQ_BATCH_LINGER). */
  linger?: number;
  /** Seconds an unfinished workflow lives (default TSQ_BATCH_EXPIRES_IN). */
  expiresIn?: number;
  client?: Client;
}

export type WorkflowState = "running" | "succeeded" | "completed" | "failed";

export interface WorkflowStatus {
  id: string;
  description: string;
  state: WorkflowState;
  policy: FailurePolicy;
  /** The stage running (or last run), from 0. */
  stage: number;
  stages: number;
  /** Step name -> its result, for the steps that succeeded so far. */
  results: Record<string, unknown>;
  createdAt: number;
  finishedAt: number | undefined;
}

/** Starts a workflow; resolves once its first stage is pushed. */
export async function workflow(stages: readonly StageLike[], options: WorkflowOptions = {}): Promise<{ id: string }> {
  const parsed = parseStages(stages);
  const policy = options.onChildFailure ?? "fail";
  if (!FAILURE_POLICIES.includes(policy))
    throw new ArgumentError(`workflow: onChildFailure must be one of ${FAILURE_POLICIES.join(", ")}, got "${policy}"`);
  const settings = batchSettings();
  const linger = positive(options.linger, "workflow linger", settings.linger);
  const expiresIn = positive(options.expiresIn, "workflow expiresIn", settings.expiresIn);
  const client = options.client ?? defaultClient();
  const id = randomBytes(12).toString("base64url").slice(0, 16);
  await client.redis
    .multi()
    .hset(workflowKey(id), {
      description: options.description ?? "",
      stages: JSON.stringify(parsed),
      policy,
      queue: options.queue ?? "default",
      state: "running",
      stage: 0,
      linger,
      expires_in: expiresIn,
      created_at: nowSeconds(),
    })
    .expire(workflowKey(id), Math.ceil(expiresIn))
    .exec();
  await runStage(client, id, 0);
  return { id };
}

/** Pushes stage `index` as a batch (idempotent: the same bid, token and jids every time). */
export async function runStage(client: Client, id: string, index: number): Promise<void> {
  const fields = await client.redis.hgetall(workflowKey(id));
  const stages = JSON.parse(fields.stages ?? "[]") as StoredStep[][];
  const steps = stages[index];
  if (!steps) throw new ArgumentError(`workflow ${id} has no stage ${index}`);
  const linger = Number(fields.linger);
  const expiresIn = Number(fields.expires_in);
  const bid = derived(`${id}:${index}`, 14);
  const batch = new Batch(
    { client, linger, expiresIn, description: `workflow ${id} stage ${index}` },
    { bid, token: `wf:${id}:${index}`, reopen: false },
  );
  const queue = fields.queue ?? "default";
  for (const event of ["settled", "death"] as const)
    batch.on(event, WORKFLOW_STEP, { wf: id, stage: index }, { queue, retry: 5 });
  await batch.jobs(async () => {
    for (const [i, step] of steps.entries()) {
      await client.push({
        ...step.options,
        class: step.class,
        args: step.args,
        jid: derived(`${id}:${index}:${i}`, 24),
        ...(step.queue === undefined ? {} : { queue: step.queue }),
        tsq_wf: id,
        tsq_wf_step: step.name,
      });
    }
  });
  await client.redis.hset(workflowKey(id), "stage", index, `stage:${index}:bid`, bid);
}

export const Workflow = {
  /** The workflow's state and results so far; undefined once it expired. */
  async status(id: string, client?: Client): Promise<WorkflowStatus | undefined> {
    return workflowStatus((client ?? defaultClient()).redis, id);
  },
};

export async function workflowStatus(redis: TsqRedis, id: string): Promise<WorkflowStatus | undefined> {
  const [fields, results] = await Promise.all([
    redis.hgetall(workflowKey(id)),
    redis.hgetall(workflowKey(id, "results")),
  ]);
  if (fields.stages === undefined) return undefined;
  return {
    id,
    description: fields.description ?? "",
    state: fields.state as WorkflowState,
    policy: fields.policy as FailurePolicy,
    stage: Number(fields.stage ?? 0),
    stages: (JSON.parse(fields.stages) as unknown[]).length,
    results: Object.fromEntries(Object.entries(results).map(([name, json]) => [name, JSON.parse(json) as unknown])),
    createdAt: Number(fields.created_at),
    finishedAt: fields.finished_at === undefined ? undefined : Number(fields.finished_at),
  };
}

/** A url-safe id derived from `seed`: the same stage gets the same bid and jids in a re-run. */
function derived(seed: string, length: number): string {
  return createHash("sha256").update(seed).digest("hex").slice(0, length);
}
