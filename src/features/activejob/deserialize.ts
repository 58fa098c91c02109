/**
 * ActiveJob arguments (`job_data["arguments"]`) to TypeScript values, as `ActiveJob::Arguments.
 * deserialize` reads them (activejob 6.1–8.x):
 *
 *   string, number, boolean, null    as they are
 *   array                            element by element
 *   {"_aj_globalid": uri}            GlobalId (exactly one key, as Rails checks)
 *   {"_aj_serialized": name, …}      RubyTime, RubyDate, RubyDuration, RubySymbol, RubyBigDecimal,
 *                                    RubyRange, RubyModule, or RubyObject for an unknown serializer
 *   any other object                 a plain object, values deserialized, without the markers
 *                                    `_aj_symbol_keys`, `_aj_ruby2_keywords`,
 *                                    `_aj_hash_with_indifferent_access`
 *
 * The payload is hostile text: objects are rebuilt with own data properties only (a `__proto__` key
 * stays a key), every name taken from it is looked up in a Map (so `constructor` or `toString` is an
 * unknown serializer, never an `Object.prototype` member), nesting deeper than `MAX_DEPTH` is refused
 * before the stack runs out, and a malformed known serializer is an error naming where it is.
 */
import { TsqError } from "../../wire/errors.js";
import {
  GlobalId,
  RubyBigDecimal,
  RubyDate,
  RubyDuration,
  RubyModule,
  RubyObject,
  RubyRange,
  RubySymbol,
  RubyTime,
  SERIALIZERS,
  type DurationUnit,
  type RubyTimeKind,
} from "./values.js";

/** An ActiveJob payload that cannot be read; the job fails and is retried like Rails' DeserializationError. */
export class ActiveJobDeserializationError extends TsqError {
  override name = "ActiveJobDeserializationError";
}

export const GLOBALID_KEY = "_aj_globalid";
export const SERIALIZED_KEY = "_aj_serialized";
export const SYMBOL_KEYS_KEY = "_aj_symbol_keys";
export const RUBY2_KEYWORDS_KEY = "_aj_ruby2_keywords";
export const INDIFFERENT_KEY = "_aj_hash_with_indifferent_access";
const MARKERS: ReadonlySet<string> = new Set([SYMBOL_KEYS_KEY, RUBY2_KEYWORDS_KEY, INDIFFERENT_KEY]);

/**
 * Arrays and hashes nested deeper than this are refused. Rails itself has no bound, but Ruby's JSON
 * parser stops at 100 by default (`max_nesting`), so no Rails app sends deeper arguments; 3,000 levels
 * overflowed V8's stack here.
 */
export const MAX_DEPTH = 100;

// A Map, not an object literal: `TIME_KINDS["constructor"]` must be undefined, not Object.
const TIME_KINDS: ReadonlyMap<string, RubyTimeKind> = new Map([
  [SERIALIZERS.time, "Time"],
  [SERIALIZERS.timeWithZone, "ActiveSupport::TimeWithZone"],
  [SERIALIZERS.dateTime, "DateTime"],
]);

const DURATION_UNITS: ReadonlySet<string> = new Set([
  "years",
  "months",
  "weeks",
  "days",
  "hours",
  "minutes",
  "seconds",
]);

export interface DeserializedArguments {
  args: unknown[];
  /** True when the last argument was a Ruby keyword-arguments hash (`_aj_ruby2_keywords`). */
  keywords: boolean;
}

/** Deserializes `arguments`; `path` names the field in error messages. */
export function deserializeArguments(serialized: unknown, path = "arguments"): DeserializedArguments {
  if (!Array.isArray(serialized)) throw new ActiveJobDeserializationError(`${path} is not an array`);
  const args = serialized.map((value, i) => deserializeValue(value, `${path}[${i}]`, 1));
  const last: unknown = serialized[serialized.length - 1];
  const keywords = isObject(last) && Array.isArray(last[RUBY2_KEYWORDS_KEY]);
  return { args, keywords };
}

/** `depth`: how many arrays and hashes enclose `value` (1 for an argument itself). */
export function deserializeValue(value: unknown, path: string, depth = 1): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) {
    throw new ActiveJobDeserializationError(
      `${shortPath(path)} is nested more than ${MAX_DEPTH} arrays or hashes deep; ActiveJob arguments ` +
        `(and Ruby's JSON parser) stop at ${MAX_DEPTH}: flatten the argument`,
    );
  }
  const inner = depth + 1;
  if (Array.isArray(value)) return value.map((item, i) => deserializeValue(item, `${path}[${i}]`, inner));
  const hash = value as Record<string, unknown>;
  const keys = Object.keys(hash);
  if (keys.length === 1 && keys[0] === GLOBALID_KEY) {
    return new GlobalId(text(own(hash, GLOBALID_KEY), `${path}.${GLOBALID_KEY}`));
  }
  if (Object.hasOwn(hash, SERIALIZED_KEY)) return deserializeObject(hash, path, inner);
  return Object.fromEntries(
    keys.filter((key) => !MARKERS.has(key)).map((key) => [key, deserializeValue(hash[key], `${path}.${key}`, inner)]),
  );
}

function deserializeObject(hash: Record<string, unknown>, path: string, depth: number): unknown {
  const name = text(own(hash, SERIALIZED_KEY), `${path}.${SERIALIZED_KEY}`);
  const value = own(hash, "value");
  const at = `${path} (${name})`;
  const kind = TIME_KINDS.get(name);
  if (kind !== undefined) {
    const zone = own(hash, "time_zone");
    return new RubyTime(isoText(value, at), kind, typeof zone === "string" ? zone : undefined);
  }
  switch (name) {
    case SERIALIZERS.date:
      return new RubyDate(isoText(value, at));
    case SERIALIZERS.symbol:
      return new RubySymbol(text(value, `${at}.value`));
    case SERIALIZERS.module:
      return new RubyModule(text(value, `${at}.value`));
    case SERIALIZERS.bigDecimal:
      return new RubyBigDecimal(text(value, `${at}.value`));
    case SERIALIZERS.duration:
      return new RubyDuration(number(value, `${at}.value`), durationParts(own(hash, "parts"), at));
    case SERIALIZERS.range:
      return new RubyRange(
        deserializeValue(own(hash, "begin"), `${path}.begin`, depth),
        deserializeValue(own(hash, "end"), `${path}.end`, depth),
        own(hash, "exclude_end") === true,
      );
    default: {
      const fields = Object.fromEntries(Object.entries(hash).filter(([key]) => key !== SERIALIZED_KEY));
      return new RubyObject(name, fields);
    }
  }
}

/** `parts` is `[[<symbol>, n], …]` (Arguments.serialize of the parts hash), or an object in hand-written payloads. */
function durationParts(parts: unknown, at: string): Partial<Record<DurationUnit, number>> {
  const pairs: [unknown, unknown][] = Array.isArray(parts)
    ? parts.map((pair) => (Array.isArray(pair) ? [pair[0], pair[1]] : [undefined, undefined]))
    : isObject(parts)
      ? Object.entries(parts)
      : [];
  const result: Partial<Record<DurationUnit, number>> = {};
  for (const [rawUnit, amount] of pairs) {
    const unit = deserializeValue(rawUnit, `${at}.parts`, MAX_DEPTH);
    const name = unit instanceof RubySymbol ? unit.name : unit;
    if (typeof name !== "string" || !DURATION_UNITS.has(name) || typeof amount !== "number") {
      throw new ActiveJobDeserializationError(`${at}.parts has an entry that is not [unit, number]`);
    }
    result[name as DurationUnit] = amount;
  }
  return result;
}

/** An own field of a payload hash: never one inherited from Object.prototype. */
function own(hash: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(hash, key) ? hash[key] : undefined;
}

/** The start of a path, for a message that stays readable when the path is thousands of levels long. */
function shortPath(path: string): string {
  return path.length > 60 ? `${path.slice(0, 60)}…` : path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function text(value: unknown, path: string): string {
  if (typeof value !== "string") throw new ActiveJobDeserializationError(`${path} is not a string`);
  return value;
}

function number(value: unknown, path: string): number {
  if (typeof value !== "number") throw new ActiveJobDeserializationError(`${path} is not a number`);
  return value;
}

/** A date or time text that parses (what Ruby's `Time.iso8601` / `Date.iso8601` would accept, roughly). */
function isoText(value: unknown, at: string): string {
  const iso = text(value, `${at}.value`);
  if (Number.isNaN(Date.parse(iso))) throw new ActiveJobDeserializationError(`${at}.value "${iso}" is not ISO 8601`);
  return iso;
}
