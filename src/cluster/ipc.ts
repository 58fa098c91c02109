/**
 * Messages between the supervisor and its children over node:cluster's IPC channel. Signals are relayed
 * as messages, never re-sent as OS signals, so a child's fate never depends on which signals it traps.
 */
import type { ChildPlan } from "./groups.js";
import type { WorkerOptions } from "../platform/config/options.js";
import type { MetricFamily } from "../metrics/exposition.js";

/**
 * Supervisor → child. `stopNow` is the second INT: requeue running jobs at once. `metrics`: a /metrics
 * scrape asks for a fresh snapshot, answered with the same `id` (see src/cluster/ChildReporter.ts);
 * `full`: the supervisor missed a snapshot (or never had one), so the answer must hold every series.
 */
export type ToChild =
  /** `timeout`: seconds a TERM gives running jobs (default: the child's configured timeout). */
  | { type: "signal"; signal: "TERM" | "TSTP" | "TTIN"; timeout?: number }
  | { type: "stopNow" }
  | { type: "metrics"; id: number; full?: boolean }
  /** The cron leader died and its record was released: stand for election now rather than at the TTL. */
  | { type: "leaderVacant" };

/** Child → supervisor. */
export type FromChild =
  /** Sent before the child fetches anything, so the supervisor can recover its jobs if it dies early. */
  | { type: "identity"; identity: string }
  | { type: "ready"; identity: string }
  | { type: "fatal"; message: string }
  /** The jobs of a fetched batch, sent before any of them starts when the child could not open its batch file. */
  | { type: "started"; batch: string }
  /**
   * The child's job and process metrics: every second, on stop, and in answer to a request (`id`). `seq`
   * grows by 1 per snapshot. `full`: every series; else only those changed since the previous snapshot,
   * except the families named in `replaced`, sent whole because one of their series disappeared.
   */
  | {
      type: "metrics";
      seq: number;
      id?: number | undefined;
      full: boolean;
      families: MetricFamily[];
      replaced?: string[];
    };

/** What a child is told at fork, through its environment (TSQ_CHILD). */
export interface ChildSpec {
  plan: ChildPlan;
  options: WorkerOptions;
  /** Where to write each fetched batch (src/cluster/batchFile.ts); without it, `started` messages. */
  batchFile?: string;
}

export const CHILD_ENV = "TSQ_CHILD";

export function isFromChild(message: unknown): message is FromChild {
  return typeof message === "object" && message !== null && typeof (message as { type?: unknown }).type === "string";
}

export function isToChild(message: unknown): message is ToChild {
  return typeof message === "object" && message !== null && typeof (message as { type?: unknown }).type === "string";
}
