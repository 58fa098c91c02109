/**
 * The one codec of an iterable job's state hash (`it-<jid>`, layout in state.ts): what `decodeState`
 * accepts is exactly what `encodeState` writes, so a state saved by a run is always readable by the
 * next one. Anything it cannot keep exactly is refused when written, naming the field:
 *
 *   ex   executions: a whole number 0..2^53-1, as decimal digits ("1e+21" is never written)
 *   c    the cursor, JSON: null, booleans, strings, finite numbers (integers within ±(2^53-1), which
 *        JSON text keeps exactly), arrays and plain objects; at most MAX_CURSOR_DEPTH levels deep and
 *        MAX_CURSOR_BYTES long. NaN, Infinity, undefined, Dates, Maps, BigInts are refused: JSON
 *        would turn them into null or a string, and the job would resume from the wrong place.
 *   rt   seconds: a finite number >= 0 (-0 is written "0")
 */
import { IterationStateError } from "./errors.js";
import type { JsonValue } from "../../wire/payload.js";

/** Bytes of cursor JSON at most: the cursor is rewritten every flush (5 s), it is a position, not data. */
export const MAX_CURSOR_BYTES = 1024 * 1024;
/** Arrays and objects nested at most this deep in a cursor. */
export const MAX_CURSOR_DEPTH = 100;

export interface IterationState {
  executions: number;
  cursor: JsonValue;
  /** Seconds. */
  runtime: number;
  /** Epoch seconds of the cancel, if the job was cancelled. */
  cancelled?: number;
}

/** The hash fields written for `state`; throws IterationStateError for a value they cannot keep. */
export function encodeState(
  key: string,
  state: Omit<IterationState, "cancelled">,
): { ex: string; c: string; rt: string } {
  const { executions, cursor, runtime } = state;
  if (!Number.isSafeInteger(executions) || executions < 0) {
    throw writeError(key, "ex", String(executions), `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  if (typeof runtime !== "number" || !Number.isFinite(runtime) || runtime < 0) {
    throw writeError(key, "rt", String(runtime), "must be a finite number of seconds >= 0");
  }
  const problem = cursorProblem(cursor, "cursor", 0);
  if (problem !== undefined) throw writeError(key, "c", describe(cursor), problem);
  const c = JSON.stringify(cursor);
  if (Buffer.byteLength(c) > MAX_CURSOR_BYTES) {
    throw writeError(key, "c", c, `is ${Buffer.byteLength(c)} bytes of JSON; at most ${MAX_CURSOR_BYTES} are kept`);
  }
  return { ex: String(executions), c, rt: String(Object.is(runtime, -0) ? 0 : runtime) };
}

/** The state in `raw` (HGETALL), or undefined for none; throws IterationStateError naming a bad field. */
export function decodeState(key: string, raw: Readonly<Record<string, string>>): IterationState | undefined {
  if (Object.keys(raw).length === 0) return undefined;
  // A hash holding only `cancelled` (cancelled before its first run) has no other field: defaults then.
  const state: IterationState = {
    executions: raw.ex === undefined ? 0 : count(key, raw.ex),
    cursor: raw.c === undefined ? null : parseCursor(key, raw.c),
    runtime: raw.rt === undefined ? 0 : seconds(key, raw.rt),
  };
  if (raw.cancelled !== undefined) state.cancelled = Number(raw.cancelled) || 0;
  return state;
}

function count(key: string, text: string): number {
  if (!/^\d+$/.test(text)) throw readError(key, "ex", text, "is not a whole number");
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw readError(key, "ex", text, `is beyond ${Number.MAX_SAFE_INTEGER}`);
  return value;
}

function seconds(key: string, text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < 0) throw readError(key, "rt", text, "is not seconds");
  return value;
}

function parseCursor(key: string, text: string): JsonValue {
  if (Buffer.byteLength(text) > MAX_CURSOR_BYTES) {
    throw readError(key, "c", text, `is longer than ${MAX_CURSOR_BYTES} bytes`);
  }
  let cursor: JsonValue;
  try {
    cursor = JSON.parse(text) as JsonValue;
  } catch (error) {
    throw readError(key, "c", text, `is not JSON (${(error as Error).message})`);
  }
  const problem = cursorProblem(cursor, "cursor", 0);
  if (problem !== undefined) throw readError(key, "c", text, problem);
  return cursor;
}

/** Why `value` cannot be kept exactly as JSON, or undefined when it can. `path` names the part. */
function cursorProblem(value: unknown, path: string, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      if (!Number.isFinite(value)) return `holds ${value} at ${path}, which JSON cannot keep (it becomes null)`;
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        return `holds ${value} at ${path}, an integer beyond ±${Number.MAX_SAFE_INTEGER} that JavaScript cannot keep exactly; use a string`;
      }
      return undefined;
    case "object":
      break;
    default:
      return `holds ${typeof value} at ${path}, which JSON cannot keep`;
  }
  if (value === null) return undefined;
  if (depth >= MAX_CURSOR_DEPTH) return `is nested more than ${MAX_CURSOR_DEPTH} levels deep`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = cursorProblem(value[i], `${path}[${i}]`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    return `holds a ${(value as { constructor?: { name?: string } }).constructor?.name ?? "non-plain object"} at ${path}, which JSON would not give back; store its string or number form`;
  }
  for (const [name, child] of Object.entries(value)) {
    const problem = cursorProblem(child, `${path}.${name}`, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function describe(value: unknown): string {
  try {
    return String(JSON.stringify(value) ?? value);
  } catch {
    return String(typeof value);
  }
}

function readError(key: string, field: string, text: string, problem: string): IterationStateError {
  return new IterationStateError(
    `field "${field}" of ${key} ${problem}: ${shown(text)}. The job cannot resume from it and was ` +
      `not retried. Fix the field, or delete it to start over (HDEL ${key} ${field}), then retry the job ` +
      "from the dead set.",
  );
}

function writeError(key: string, field: string, text: string, problem: string): IterationStateError {
  return new IterationStateError(
    `cannot save field "${field}" of ${key}: it ${problem}, got ${shown(text)}. The state kept in Redis is ` +
      "the last one saved; make the cursor plain JSON (strings, safe integers, arrays, objects) and retry the job.",
  );
}

function shown(text: string): string {
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}
