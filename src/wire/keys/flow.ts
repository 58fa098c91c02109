/**
 * Flow control (src/features/flow): kill switches, batches and workflows. Reached through
 * src/wire/keys.ts, whose header maps every key.
 */

/**
 * Kill switches, one HASH field per job class: `ImportJob` → `{"action":"defer","delay":300,"at":1795…}`
 * or `{"action":"drop","at":1795…}` (`at`: epoch seconds when set). Written by tsqctl, read by workers.
 */
export const KILL_SWITCHES = "tsq:kill-switches";

/**
 * Batches (src/features/flow/batches), tsq's own namespace: Sidekiq Pro's `b-<bid>` keys are never written, so a job
 * carrying a Pro `bid` finds no tsq batch and leaves Pro's bookkeeping to Pro.
 */
export const BATCH_PREFIX = "tsq:batch:";
export const BATCHES = "tsq:batches";

/** A batch's companion keys (Lua builds them from the same list: src/features/flow/batches/lib/batch-keys.lua). */
export const BATCH_KEY_PARTS = ["pending", "unrun", "failed", "dead", "failinfo", "open"] as const;
export type BatchKeyPart = (typeof BATCH_KEY_PARTS)[number];

/** `tsq:batch:<bid>`, or one of its companion keys `tsq:batch:<bid>:<part>` (built the same way in Lua). */
export function batchKey(bid: string, part?: BatchKeyPart): string {
  return part === undefined ? `${BATCH_PREFIX}${bid}` : `${BATCH_PREFIX}${bid}:${part}`;
}

export const WORKFLOW_PREFIX = "tsq:workflow:";

export function workflowKey(id: string, part?: "results"): string {
  return part === undefined ? `${WORKFLOW_PREFIX}${id}` : `${WORKFLOW_PREFIX}${id}:${part}`;
}
