/**
 * Strict arguments (Sidekiq 7's default): job arguments must survive a JSON round trip unchanged, so
 * only strings, finite numbers, booleans, null, arrays and plain objects of those are accepted.
 * Anything else is rejected before it reaches Redis, with the path of the offending value.
 */
import { ArgumentError } from "../wire/errors.js";

const HINT =
  "job arguments must be JSON-native: string, finite number, boolean, null, or arrays and plain objects of those";

function describe(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      if (Number.isNaN(value)) return "NaN";
      if (!Number.isFinite(value)) return `${value}`;
      return undefined;
    case "undefined":
      return "undefined";
    case "bigint":
      return "a BigInt (pass it as a string)";
    case "symbol":
      return "a Symbol";
    case "function":
      return "a function";
    default:
      break;
  }
  if (value === null || Array.isArray(value)) return undefined;
  if (value instanceof Date) return "a Date (pass date.toISOString() or epoch seconds)";
  if (value instanceof Map) return "a Map (pass Object.fromEntries(map))";
  if (value instanceof Set) return "a Set (pass an array)";
  if (value instanceof RegExp) return "a RegExp";
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return "binary data (pass base64 text)";
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return undefined;
  const name = (proto as { constructor?: { name?: string } }).constructor?.name;
  return `an instance of ${name || "a class"} (pass a plain object)`;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Throws ArgumentError naming the first non-JSON-native value, e.g. `args[1].when is a Date`. */
export function verifyStrictArgs(args: unknown, path = "args"): void {
  walk(args, path, new Set());
}

function walk(value: unknown, path: string, seen: Set<object>): void {
  const problem = describe(value);
  if (problem) throw new ArgumentError(`${path} is ${problem}; ${HINT}`);
  if (value === null || typeof value !== "object") return;
  if (seen.has(value)) throw new ArgumentError(`${path} is a circular reference; ${HINT}`);
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new ArgumentError(`${path}[${i}] is a hole in a sparse array (undefined); ${HINT}`);
      walk(value[i], `${path}[${i}]`, seen);
    }
  } else {
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new ArgumentError(`${path} has Symbol keys; ${HINT}`);
    }
    for (const [key, child] of Object.entries(value)) walk(child, childPath(path, key), seen);
  }
  seen.delete(value);
}
