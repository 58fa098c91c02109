/**
 * Queue lists as written in the config file and given to `-q`: `name` or `name,weight` text, or
 * `[name, weight]` pairs; each queue listed once (weights say how often it is polled).
 */
import { ConfigError } from "../../wire/errors.js";
import { BOUNDS, MAX_QUEUE_WEIGHT, withinBound } from "./bounds.js";
import type { QueueSpec } from "./options.js";
import { fail, type Where } from "./checks.js";

export const QUEUE_FORMAT = `a queue name, optionally followed by ",<weight>" with an integer weight from 1 to ${MAX_QUEUE_WEIGHT} (e.g. "critical,2")`;

/** Parses `name` or `name,weight` (as given to `-q` or in YAML); undefined when malformed. */
export function parseQueueText(text: string): QueueSpec | undefined {
  const [name, weight, ...rest] = text.split(",").map((part) => part.trim());
  return rest.length > 0 ? undefined : queueSpec(name, weight);
}

/** The first queue name listed twice, if any: a capsule lists each queue once, weights say how often. */
export function duplicateQueue(queues: readonly QueueSpec[]): string | undefined {
  const seen = new Set<string>();
  for (const { name } of queues) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

function queueSpec(name: unknown, weight: unknown): QueueSpec | undefined {
  if (typeof name !== "string" || !/^[^\s,]+$/.test(name)) return undefined;
  if (weight === undefined) return { name, weight: 0 }; // 0 = no weight given (Sidekiq's strict order)
  const value = typeof weight === "string" && /^\d+$/.test(weight) ? Number(weight) : weight;
  return withinBound(value, BOUNDS.weight) ? { name, weight: value } : undefined;
}

function queueItem(item: unknown): QueueSpec | undefined {
  if (typeof item === "string") return parseQueueText(item);
  if (Array.isArray(item) && (item.length === 1 || item.length === 2)) return queueSpec(item[0], item[1]);
  return undefined;
}

export function queueList(value: unknown, at: Where): QueueSpec[] {
  if (!Array.isArray(value) || value.length === 0) {
    return fail(at, "a non-empty list of queues, e.g. [critical, [default, 2], low]", value);
  }
  const queues = value.map(
    (item: unknown, index) =>
      queueItem(item) ??
      fail({ ...at, path: `${at.path}[${index}]` }, `${QUEUE_FORMAT} or a [name, weight] pair`, item),
  );
  const twice = duplicateQueue(queues);
  if (twice !== undefined)
    throw new ConfigError(`${at.file}: ${at.path} lists queue "${twice}" twice; list it once, with a weight`);
  return queues;
}
