/** What a Cluster tells its caller about a child process, and how it logs a child of its plan. */
import type { Child } from "../cluster/Supervisor.js";
import type { ChildPlan } from "../cluster/groups.js";

export interface ChildInfo {
  /** The child's slot in the plan (0-based), kept by its replacements. */
  index: number;
  /** Its group's label (the group as given, or the queues without groups). */
  group: string;
  pid: number | undefined;
  /** Its process identity in Redis, once it reported one. */
  identity: string | undefined;
  /** True once it wrote its first heartbeat. */
  ready: boolean;
}

export interface ChildExitInfo extends ChildInfo {
  code: number | null;
  signal: string | null;
}

export function childInfo(child: Child): ChildInfo {
  return {
    index: child.slot.plan.index,
    group: child.slot.plan.groupLabel,
    pid: child.worker.process.pid,
    identity: child.identity,
    ready: child.readyAt !== undefined,
  };
}

export function describeChild(c: ChildPlan): Record<string, unknown> {
  return {
    child: c.index,
    group: c.groupLabel,
    queues: c.queues,
    concurrency: c.concurrency,
    ...(c.concurrencyWhy === undefined ? {} : { concurrency_from: c.concurrencyWhy }),
  };
}
