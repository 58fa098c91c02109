/**
 * TypeScript values to ActiveJob arguments, as `ActiveJob::Arguments.serialize` writes them in Rails
 * 6.1 (which every later Rails reads):
 *
 *   string, finite number, boolean, null   as they are
 *   array                                  element by element
 *   plain object                           a string-keyed Hash: {…, "_aj_symbol_keys": []}
 *   symbolKeys(obj)                        a Symbol-keyed Hash: {…, "_aj_symbol_keys": [every key]}
 *   indifferentAccess(obj)                 {…, "_aj_hash_with_indifferent_access": true}
 *   last argument with `keywords: true`    keyword arguments: {…, "_aj_ruby2_keywords": [every key]}
 *   Date / RubyTime                        {"_aj_serialized": "…TimeSerializer", "value": ISO 8601 (ns)}
 *   RubyDate, RubyDuration, RubySymbol,    their serializer's hash (values.ts)
 *   RubyModule, GlobalId, RubyBigDecimal,
 *   RubyRange, RubyObject
 *
 * Anything else (undefined, NaN, Infinity, BigInt, functions, Maps, Sets, class instances, a key
 * ActiveJob reserves, a circular reference) is rejected with an ArgumentError naming the value, before
 * anything reaches Redis.
 */
import { ArgumentError } from "../../wire/errors.js";
import type { JsonValue } from "../../wire/payload.js";
import {
  GLOBALID_KEY,
  INDIFFERENT_KEY,
  MAX_DEPTH,
  RUBY2_KEYWORDS_KEY,
  SERIALIZED_KEY,
  SYMBOL_KEYS_KEY,
} from "./deserialize.js";
import {
  GlobalId,
  RubyBigDecimal,
  RubyDate,
  RubyDuration,
  RubyHash,
  RubyModule,
  RubyObject,
  RubyRange,
  RubySymbol,
  RubyTime,
  SERIALIZERS,
  iso8601Nanos,
  type HashKeys,
} from "./values.js";

type JsonObject = { [key: string]: JsonValue };

const RESERVED: ReadonlySet<string> = new Set([
  GLOBALID_KEY,
  SERIALIZED_KEY,
  SYMBOL_KEYS_KEY,
  RUBY2_KEYWORDS_KEY,
  INDIFFERENT_KEY,
]);

const TIME_SERIALIZERS = {
  Time: SERIALIZERS.time,
  DateTime: SERIALIZERS.dateTime,
  "ActiveSupport::TimeWithZone": SERIALIZERS.timeWithZone,
} as const;

const HINT =
  "ActiveJob arguments are strings, finite numbers, booleans, null, arrays, plain objects, Dates and tsq's Ruby value classes (RubyTime, RubySymbol, GlobalId, …)";

/**
 * Serializes a job's arguments. With `keywords`, the last argument must be a plain object (or
 * `symbolKeys(...)`): it becomes Ruby keyword arguments (`perform(name, count: 3)`).
 */
export function serializeArguments(args: readonly unknown[], keywords: boolean, where: string): JsonValue[] {
  if (!Array.isArray(args)) throw new ArgumentError(`${where}: arguments must be an array`);
  const serializer = new Serializer(where);
  return args.map((arg, i) => {
    const path = `arguments[${i}]`;
    if (keywords && i === args.length - 1) return serializer.keywords(arg, path);
    return serializer.value(arg, path);
  });
}

class Serializer {
  private readonly seen = new Set<object>();

  constructor(private readonly where: string) {}

  keywords(value: unknown, path: string): JsonObject {
    const entries = value instanceof RubyHash ? value.entries : isPlainObject(value) ? value : undefined;
    if (entries === undefined) {
      throw new ArgumentError(
        `${this.where}: ${path} must be a plain object of keyword arguments (keywords: true), got ${describe(value)}`,
      );
    }
    return this.hash(entries, path, "keywords");
  }

  value(value: unknown, path: string): JsonValue {
    switch (typeof value) {
      case "string":
      case "boolean":
        return value;
      case "number":
        if (Number.isFinite(value)) return value;
        return this.reject(path, `${value}`);
      case "object":
        break;
      default:
        return this.reject(path, describe(value));
    }
    if (value === null) return null;
    if (this.seen.has(value)) return this.reject(path, "a circular reference");
    // `seen` holds the objects enclosing this one: what a Rails reader (and deserialize.ts) would refuse
    // is refused here, before the stack runs out.
    if (this.seen.size >= MAX_DEPTH) return this.reject(path, `nested more than ${MAX_DEPTH} arrays or objects deep`);
    this.seen.add(value);
    try {
      return this.object(value, path);
    } finally {
      this.seen.delete(value);
    }
  }

  private object(value: object, path: string): JsonValue {
    if (Array.isArray(value)) {
      const out: JsonValue[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) return this.reject(`${path}[${i}]`, "a hole in a sparse array");
        out.push(this.value(value[i], `${path}[${i}]`));
      }
      return out;
    }
    if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) return this.reject(path, "an invalid Date");
      return { [SERIALIZED_KEY]: SERIALIZERS.time, value: iso8601Nanos(value) };
    }
    if (value instanceof RubyHash) return this.hash(value.entries, path, value.keys);
    const special = this.rubyValue(value, path);
    if (special !== undefined) return special;
    if (isPlainObject(value)) return this.hash(value, path, "string");
    return this.reject(path, describe(value));
  }

  /** The serializer hash of one of the Ruby value classes, or undefined for anything else. */
  private rubyValue(value: object, path: string): JsonObject | undefined {
    if (value instanceof RubyTime) {
      const out: JsonObject = { [SERIALIZED_KEY]: TIME_SERIALIZERS[value.kind], value: value.iso8601 };
      if (value.timeZone !== undefined) out.time_zone = value.timeZone;
      return out;
    }
    if (value instanceof RubyDate) return { [SERIALIZED_KEY]: SERIALIZERS.date, value: value.iso8601 };
    if (value instanceof RubySymbol) return symbol(value.name);
    if (value instanceof RubyModule) return { [SERIALIZED_KEY]: SERIALIZERS.module, value: value.name };
    if (value instanceof RubyBigDecimal) return { [SERIALIZED_KEY]: SERIALIZERS.bigDecimal, value: value.value };
    if (value instanceof GlobalId) return { [GLOBALID_KEY]: value.uri };
    if (value instanceof RubyDuration) {
      const parts = Object.entries(value.parts)
        .filter(([, amount]) => amount !== undefined)
        .map(([unit, amount]): JsonValue => [symbol(unit), this.value(amount, `${path}.parts.${unit}`)]);
      return { [SERIALIZED_KEY]: SERIALIZERS.duration, value: this.value(value.seconds, `${path}.seconds`), parts };
    }
    if (value instanceof RubyRange) {
      return {
        [SERIALIZED_KEY]: SERIALIZERS.range,
        begin: this.value(value.begin, `${path}.begin`),
        end: this.value(value.end, `${path}.end`),
        exclude_end: value.excludeEnd,
      };
    }
    if (value instanceof RubyObject) {
      const fields = this.hashEntries(value.fields, path);
      return { [SERIALIZED_KEY]: value.serializer, ...fields };
    }
    return undefined;
  }

  /** Ruby's `serialize_hash` plus the marker for the key type (always last, as Rails writes it). */
  private hash(entries: Readonly<Record<string, unknown>>, path: string, keys: HashKeys | "keywords"): JsonObject {
    if (!isPlainObject(entries)) return this.reject(path, describe(entries));
    const out = this.hashEntries(entries, path);
    for (const key of Object.keys(out)) {
      if (RESERVED.has(key)) {
        throw new ArgumentError(
          `${this.where}: ${childPath(path, key)} uses the key "${key}", which ActiveJob reserves; rename it`,
        );
      }
    }
    if (keys === "indifferent") out[INDIFFERENT_KEY] = true;
    else if (keys === "keywords") out[RUBY2_KEYWORDS_KEY] = Object.keys(entries);
    else out[SYMBOL_KEYS_KEY] = keys === "symbol" ? Object.keys(entries) : [];
    return out;
  }

  private hashEntries(entries: Readonly<Record<string, unknown>>, path: string): JsonObject {
    if (Object.getOwnPropertySymbols(entries).length > 0) return this.reject(path, "an object with Symbol keys");
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(entries)) {
      // defineProperty: a "__proto__" key stays an ordinary key.
      Object.defineProperty(out, key, {
        value: this.value(child, childPath(path, key)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  private reject(path: string, what: string): never {
    const shown = path.length > 60 ? `${path.slice(0, 60)}…` : path;
    throw new ArgumentError(`${this.where}: ${shown} is ${what}, which ActiveJob cannot represent; ${HINT}`);
  }
}

function symbol(name: string): JsonObject {
  return { [SERIALIZED_KEY]: SERIALIZERS.symbol, value: name };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** What a rejected value is, for the message. */
function describe(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "bigint":
      return `a BigInt (${value}n; pass a number, or new RubyBigDecimal("${value}"))`;
    case "symbol":
      return "a JavaScript Symbol (pass new RubySymbol(name) for a Ruby Symbol)";
    case "function":
      return "a function";
    case "object":
      break;
    default:
      return typeof value;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Map) return "a Map (pass Object.fromEntries(map))";
  if (value instanceof Set) return "a Set (pass an array)";
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return "binary data (pass base64 text)";
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name ? `an instance of ${name}` : "an object";
}
