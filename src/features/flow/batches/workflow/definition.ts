/**
 * A workflow's shape: `workflow([A, [B1, B2, B3], C])` runs A, then B1..B3 side by side (fan-out), then
 * C once they are done (fan-in). A step is a job class, or `{ job, args, name, queue }`; a nested
 * array is one stage of parallel steps. Stored as JSON in the workflow's hash, so any worker can run
 * the next stage.
 */
import { ArgumentError } from "../../../../wire/errors.js";
import type { JobClassLike } from "../../../../client/options.js";
import { jobNameOf } from "../../../../client/options.js";
import type { JsonValue } from "../../../../wire/payload.js";

/** What to do when a step dies (retries exhausted, `retry: false`, discarded). */
export type FailurePolicy = "fail" | "ignore" | "continue";
export const FAILURE_POLICIES: readonly FailurePolicy[] = ["fail", "ignore", "continue"];

export interface StepSpec {
  job: JobClassLike | string;
  args?: JsonValue[];
  /** The key of its result (default `<Class>` or `<Class>#<n>` when a stage runs the class twice). */
  name?: string;
  queue?: string;
  /** Job options for the push, snake_case as on the wire (`{ retry: 3 }`); the class's own apply where it is loaded. */
  options?: Record<string, JsonValue>;
}
export type StepLike = JobClassLike | string | StepSpec;
export type StageLike = StepLike | StepLike[];

export interface StoredStep {
  class: string;
  args: JsonValue[];
  name: string;
  queue?: string;
  options?: Record<string, JsonValue>;
}

export function parseStages(given: readonly StageLike[]): StoredStep[][] {
  // Checked as unknown: a JavaScript caller may pass anything.
  const stages: unknown = given;
  if (!Array.isArray(stages) || stages.length === 0)
    throw new ArgumentError("workflow: give at least one step, e.g. workflow([Fetch, [Part1, Part2], Merge])");
  const names = new Set<string>();
  return given.map((stage, index) => {
    const steps: readonly StepLike[] = isStage(stage) ? stage : [stage];
    if (steps.length === 0) throw new ArgumentError(`workflow: stage ${index} is an empty list; drop it or add steps`);
    return steps.map((step) => {
      const spec: StepSpec = typeof step === "object" && "job" in step ? step : { job: step };
      const className = jobNameOf(spec.job);
      if (!className) throw new ArgumentError(`workflow: stage ${index} has a step with no job class`);
      let name = spec.name ?? className;
      if (spec.name === undefined) for (let n = 2; names.has(name); n++) name = `${className}#${n}`;
      if (names.has(name)) throw new ArgumentError(`workflow: two steps are named "${name}"; names key the results`);
      names.add(name);
      return {
        class: className,
        args: spec.args ?? [],
        name,
        ...(spec.queue === undefined ? {} : { queue: spec.queue }),
        ...(spec.options === undefined ? {} : { options: spec.options }),
      };
    });
  });
}

function isStage(stage: StageLike): stage is StepLike[] {
  return Array.isArray(stage);
}
