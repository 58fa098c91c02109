/**
 * Generic checks for config files: walk a parsed YAML mapping against a schema, and the value checks
 * each key uses. Every failure names the file, the key path and the value, and says what was expected.
 */
import { ConfigError } from "../../wire/errors.js";
import { redactUrl } from "../redis/connection.js";
import { BOUNDS, describeBound, withinBound, type BoundName } from "./bounds.js";

/** Where a value sits: the file as the user named it, and the dotted key path inside it. */
export interface Where {
  file: string;
  path: string;
}
export interface Entry {
  key: string;
  value: unknown;
  path: string;
}
export type Check<T> = (value: unknown, at: Where) => T;
/** One check per field; its YAML key is the field's snake_case name. */
export type Schema<T> = { [K in keyof T]-?: Check<Exclude<T[K], undefined>> };
export function applySchema<T>(entries: Entry[], schema: Schema<T>, file: string): Partial<T> {
  // The schema's own type ties each field to its check; this record view only lets us index it by name.
  const checks = schema as Record<string, Check<unknown>>;
  const fields = new Map(Object.keys(checks).map((field) => [snakeCase(field), field]));
  const result: Record<string, unknown> = {};
  for (const entry of entries) {
    const field = fields.get(entry.key);
    const check = field === undefined ? undefined : checks[field];
    if (field === undefined || check === undefined) return unknownKey(file, entry.path, fields.keys());
    result[field] = check(entry.value, { file, path: entry.path });
  }
  return result as Partial<T>;
}
/** The entries of a YAML mapping, Sidekiq-style keys (`:concurrency`) reduced to plain ones. */
export function entriesOf(value: unknown, at: Where): Entry[] {
  if (!isMapping(value)) return fail(at, "a mapping of key: value pairs", value);
  const seen = new Set<string>();
  return Object.entries(value).map(([raw, item]) => {
    const key = raw.startsWith(":") ? raw.slice(1) : raw;
    const path = at.path === "" ? key : `${at.path}.${key}`;
    if (seen.has(key)) throw new ConfigError(`${at.file}: ${path} is given twice (with and without a colon); keep one`);
    seen.add(key);
    return { key, value: item, path };
  });
}
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
export function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
export function unknownKey(file: string, path: string, known: Iterable<string>): never {
  const list = [...known].join(", ");
  // A top-level key may be a plug-in's, known only when that plug-in is in the list the process runs.
  const plugin = path.includes(".") ? "" : "; a plug-in's key is known only where that plug-in runs";
  throw new ConfigError(`${file}: unknown key "${path}"; fix its spelling or remove it (known keys: ${list})${plugin}`);
}
export function fail(at: Where, expected: string, value: unknown): never {
  const what = at.path === "" ? "the top level" : at.path;
  throw new ConfigError(`${at.file}: ${what} must be ${expected}, got ${show(value)}`);
}
/** A short rendering of a bad value; 60 characters keep one-line messages readable. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string" && /:\/\/.*@/.test(value)) return JSON.stringify(redactUrl(value)); // may hold a password
  // YAML's .nan and .inf are numbers JSON cannot hold: it would render them as null.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  // JSON.stringify gives undefined for a function or symbol, whatever its type says.
  const text = (JSON.stringify(value) as string | undefined) ?? `a ${typeof value}`;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
/** A number within its entry of BOUNDS (bounds.ts); the message gives the allowed range. */
export function bounded(name: BoundName): Check<number> {
  const bound = BOUNDS[name];
  return (value, at) => (withinBound(value, bound) ? value : fail(at, describeBound(bound), value));
}
export function positiveInteger(value: unknown, at: Where): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0
    ? value
    : fail(at, "a positive integer", value);
}
export function nonNegativeInteger(value: unknown, at: Where): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : fail(at, "an integer >= 0", value);
}
export function positiveNumber(value: unknown, at: Where): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fail(at, "a number > 0", value);
}
export function optionalPositiveNumber(value: unknown, at: Where): number | null {
  return value === null ? null : positiveNumber(value, at);
}
export function port(value: unknown, at: Where): number {
  const ok = typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 65_535;
  return ok ? value : fail(at, "a TCP port from 0 to 65535 (0 = off)", value);
}
export function nonEmptyString(value: unknown, at: Where): string {
  return typeof value === "string" && value.trim() !== "" ? value : fail(at, "a non-empty string", value);
}
export function stringList(value: unknown, at: Where): string[] {
  const ok = Array.isArray(value) && value.every((item) => typeof item === "string" && item.trim() !== "");
  return ok ? (value as string[]) : fail(at, "a list of non-empty strings", value);
}
export function nested<T>(schema: Schema<T>): Check<Partial<T>> {
  return (value, at) => applySchema(entriesOf(value, at), schema, at.file);
}
export function boolean(value: unknown, at: Where): boolean {
  return typeof value === "boolean" ? value : fail(at, "true or false", value);
}
export function jobArgs(value: unknown, at: Where): unknown[] {
  return Array.isArray(value) ? value : fail(at, 'a list of job arguments, e.g. [1, "daily"]', value);
}
