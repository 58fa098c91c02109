/**
 * The callback job of every workflow stage (`settled` and `death` of the stage's batch): applies the
 * failure policy and starts the next stage, or ends the workflow. Safe to run twice: the move past a
 * stage is claimed once (HSETNX advance:<n> = this jid; a re-run of the same job may go on), and the
 * stage it starts is idempotent (Workflow.ts).
 */
import { Job } from "../../../../client/Job.js";
import { defaultClient } from "../../../../client/defaultClient.js";
import { workflowKey } from "../../../../wire/keys.js";
import { nowSeconds } from "../../../../wire/timestamps.js";
import type { FailurePolicy } from "./definition.js";
import { WORKFLOW_STEP } from "./names.js";
import { runStage, type WorkflowState } from "./Workflow.js";

interface StageStatus {
  event: "settled" | "death";
  dead: number;
}

export class WorkflowStep extends Job {
  static override jobName = WORKFLOW_STEP;

  async perform(status: StageStatus, options: { wf: string; stage: number }): Promise<void> {
    const client = defaultClient();
    const key = workflowKey(options.wf);
    const fields = await client.redis.hgetall(key);
    if (fields.state !== "running") return; // finished, or expired
    const policy = fields.policy as FailurePolicy;
    const stages = (JSON.parse(fields.stages ?? "[]") as unknown[][]).length;
    if (status.event === "death" && policy === "ignore") return; // waits for `settled`
    if (status.dead > 0 && policy === "fail") {
      await this.finish(key, "failed", Number(fields.linger));
      return;
    }
    // continue: on the first death or on settled, whichever comes first; ignore and fail: on settled.
    const claimed = await client.redis.hsetnx(key, `advance:${options.stage}`, this.jid);
    if (claimed === 0 && (await client.redis.hget(key, `advance:${options.stage}`)) !== this.jid) return;
    if (options.stage + 1 < stages) {
      await runStage(client, options.wf, options.stage + 1);
      return;
    }
    const steps = (JSON.parse(fields.stages ?? "[]") as unknown[][]).reduce((sum, stage) => sum + stage.length, 0);
    const results = await client.redis.hlen(workflowKey(options.wf, "results"));
    await this.finish(key, results >= steps ? "succeeded" : "completed", Number(fields.linger));
  }

  /** The workflow's end: its state, then every key of it expires after `linger` seconds. */
  private async finish(key: string, state: WorkflowState, linger: number): Promise<void> {
    const redis = defaultClient().redis;
    if ((await redis.hsetnx(key, "finished_at", nowSeconds())) === 0) return;
    const ms = Math.ceil(linger * 1000);
    await redis.multi().hset(key, "state", state).pexpire(key, ms).pexpire(`${key}:results`, ms).exec();
  }
}
