/**
 * Queue order for a fetch, exactly as Sidekiq computes it (`Capsule#queues`, `BasicFetch#queues_cmd`):
 *
 *   strict   every weight 0 (none given): the listed order, every time
 *   random   every weight 1: the unique queues shuffled on every fetch
 *   weighted anything else: each queue repeated max(weight, 1) times, shuffled, de-duplicated, so
 *            queue q comes first with probability w_q / Σw
 */
import type { QueueSpec } from "../../platform/config/options.js";

export type QueueMode = "strict" | "random" | "weighted";

export function queueMode(queues: readonly QueueSpec[]): QueueMode {
  if (queues.every((q) => q.weight === 0)) return "strict";
  if (queues.every((q) => q.weight === 1)) return "random";
  return "weighted";
}

/** The candidate list: each queue repeated max(weight, 1) times. */
function expand(queues: readonly QueueSpec[]): string[] {
  return queues.flatMap((q) => Array<string>(Math.max(q.weight, 1)).fill(q.name));
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

export class QueueOrder {
  readonly mode: QueueMode;
  private readonly unique: string[];
  private readonly candidates: string[];

  constructor(queues: readonly QueueSpec[]) {
    if (queues.length === 0) throw new Error("a capsule needs at least one queue");
    this.mode = queueMode(queues);
    this.unique = [...new Set(queues.map((q) => q.name))];
    this.candidates = expand(queues);
  }

  /** Queue names in the order to try for the next fetch. */
  next(): string[] {
    if (this.mode === "strict") return this.unique;
    return [...new Set(shuffle([...this.candidates]))];
  }

  /** Unique queue names in configuration order. */
  names(): string[] {
    return [...this.unique];
  }
}
