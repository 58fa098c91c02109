/**
 * Kill switches per job class, GitLab's `skip_jobs` without a deploy: `defer` re-schedules a class's
 * jobs instead of running them (GitLab's `run_sidekiq_jobs_<Worker>` flag off), `drop` discards them
 * (`drop_sidekiq_jobs_<Worker>` on). The state is one Redis HASH (keys.ts KILL_SWITCHES); this module
 * reads and writes it. Values come from Redis, so they are parsed as hostile: a malformed one is skipped.
 */
import { KILL_SWITCHES } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { nowSeconds } from "../../../wire/timestamps.js";

/** Seconds a deferred job is pushed back by default (GitLab's SIDEKIQ_DEFER_JOBS_DELAY: 5 minutes). */
export const DEFAULT_DEFER_DELAY = 300;

export type KillSwitch =
  /** Re-schedule each job `delay` seconds later, with `deferred`, `deferred_by`, `deferred_count`. */
  | { readonly action: "defer"; readonly delay: number; readonly at: number }
  /** Acknowledge each job without running it, with a log line naming its jid. */
  | { readonly action: "drop"; readonly at: number };

/** Every switch that is set, by class name. Malformed entries are left out (and left in Redis). */
export async function readSwitches(redis: TsqRedis): Promise<Map<string, KillSwitch>> {
  const raw = await redis.hgetall(KILL_SWITCHES);
  const switches = new Map<string, KillSwitch>();
  for (const [className, text] of Object.entries(raw)) {
    const parsed = parseSwitch(text);
    if (parsed) switches.set(className, parsed);
  }
  return switches;
}

/** Sets (or replaces) the switch of `className`. */
export async function setSwitch(
  redis: TsqRedis,
  className: string,
  change: { action: "defer"; delay: number } | { action: "drop" },
): Promise<KillSwitch> {
  const value: KillSwitch = { ...change, at: Math.floor(nowSeconds()) };
  await redis.hset(KILL_SWITCHES, className, JSON.stringify(value));
  return value;
}

/** Removes the switch of `className`; false when there was none. */
export async function removeSwitch(redis: TsqRedis, className: string): Promise<boolean> {
  return (await redis.hdel(KILL_SWITCHES, className)) > 0;
}

/** The switch a stored value describes, or undefined when it is not one. */
export function parseSwitch(text: string): KillSwitch | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const { action, delay, at } = value as Record<string, unknown>;
  const when = typeof at === "number" && Number.isFinite(at) ? at : 0;
  if (action === "drop") return { action, at: when };
  if (action === "defer") {
    const seconds = typeof delay === "number" && Number.isFinite(delay) && delay > 0 ? delay : DEFAULT_DEFER_DELAY;
    return { action, delay: seconds, at: when };
  }
  return undefined;
}
