/**
 * A feature's own settings (`defineSetting`): each a worker option key (camelCase, as `new Worker({
 * options })` takes them) with its default, its bounds, and the names it goes by outside code: its
 * config-file key (snake_case, as the file spells keys), and optionally an environment variable and a
 * `tsq`/`tsq-cluster` flag. A plug-in lists its settings in `settings`; the entry points read the file,
 * the environment and the flags for the settings of the plug-in list they run (precedence flag > file >
 * environment > default, as the core's), and the plug-in reads each once in `server(ctx)`. A value left
 * unset stays absent from the worker's options: `read` supplies the default.
 *
 * Here, not in server/, because the config file is checked against these specs (platform/config) and
 * platform imports nothing above it.
 */
import { ConfigError } from "../../wire/errors.js";
import { describeBound, showNumber, withinBound, type Bound } from "./bounds.js";
import { snakeCase } from "./checks.js";
import { FILE_SCHEMA } from "./fileSchema.js";

export type SettingValue = number | string | boolean;

/** Widens a literal default (`100`) to its kind (`number`). */
export type Kind<T extends SettingValue> = T extends number ? number : T extends string ? string : boolean;

export interface SettingSpec<T extends SettingValue> {
  /** The worker option key, camelCase (`auditTrailMaxLength`). */
  readonly key: string;
  readonly default: T;
  /** Bounds of a number, inclusive. */
  readonly min?: number;
  readonly max?: number;
  /** True: a number must be strictly above `min` (a duration of 0 s means nothing). */
  readonly above?: boolean;
  /** A number must be a whole one. */
  readonly integer?: boolean;
  /** What a number counts, shown in messages ("seconds", "jobs"). */
  readonly unit?: string;
  /** The config-file key (snake_case); default: `key` in snake_case. `false`: not settable in the file. */
  readonly file?: string | false;
  /** An environment variable that sets it (below the file and flags), e.g. `TSQ_AUDIT_TRAIL_MAX_LENGTH`. */
  readonly env?: string;
  /** A `tsq`/`tsq-cluster` flag that sets it (above everything), e.g. `--audit-trail-max-length`. */
  readonly flag?: string;
  /**
   * A check against the worker's other options, run where options are resolved when this one is given:
   * the problem as a sentence naming both keys, or undefined.
   */
  readonly check?: (value: Kind<T>, options: object) => string | undefined;
}

export interface Setting<T extends SettingValue = SettingValue> extends SettingSpec<T> {
  /** The config-file key, or undefined when the file cannot set it. */
  readonly fileKey: string | undefined;
  /** What a valid value is ("true or false", "an integer from 1 to 1000000 (jobs)"). */
  readonly expected: string;
  /** A number's bounds, as the core's table states its own (bounds.ts); undefined for other kinds. */
  readonly bound: Bound | undefined;
  /** True when `value` is a valid value of this setting. */
  accepts(value: unknown): value is T;
  /** The worker's value (its `options[key]`), or the default; throws ConfigError when out of bounds. */
  read(options: object): T;
}

/** Declares a setting; reads nothing until `read`. */
export function defineSetting<T extends SettingValue>(spec: SettingSpec<T>): Setting<Kind<T>> {
  const { key } = spec;
  if (!/^[a-z][A-Za-z0-9]*$/.test(key)) throw new TypeError(`defineSetting: a key is camelCase, got "${key}"`);
  const fileKey = spec.file === false ? undefined : (spec.file ?? snakeCase(key));
  if (fileKey !== undefined && !/^[a-z][a-z0-9_]*$/.test(fileKey))
    throw new TypeError(`defineSetting: a config-file key is snake_case, got "${fileKey}"`);
  if (spec.env !== undefined && !/^[A-Z][A-Z0-9_]*$/.test(spec.env))
    throw new TypeError(`defineSetting: an environment variable is UPPER_SNAKE_CASE, got "${spec.env}"`);
  if (spec.flag !== undefined && !/^--[a-z][a-z0-9-]*$/.test(spec.flag))
    throw new TypeError(`defineSetting: a flag is --kebab-case, got "${spec.flag}"`);
  const bound = boundOf(spec);
  const expected = bound ? describeBound(bound) : typeof spec.default === "boolean" ? "true or false" : "a string";
  const accepts = (value: unknown): value is Kind<T> =>
    typeof value === typeof spec.default && (bound === undefined || withinBound(value, bound));
  return {
    ...(spec as unknown as SettingSpec<Kind<T>>), // a literal default widened to its kind
    fileKey,
    expected,
    bound,
    accepts,
    read(options) {
      const value: unknown = (options as Record<string, unknown>)[key] ?? spec.default;
      if (!accepts(value)) throw new ConfigError(`\`${key}\` must be ${expected}, got ${showNumber(value)}`);
      return value;
    },
  };
}

/** A number setting's bounds as the core's table states them (bounds.ts); undefined for other kinds. */
function boundOf(spec: SettingSpec<SettingValue>): Bound | undefined {
  if (typeof spec.default !== "number") return undefined;
  return {
    min: spec.min ?? -Infinity,
    above: spec.above,
    max: spec.max ?? Infinity,
    integer: spec.integer === true,
    unit: spec.unit ?? "",
  };
}

/**
 * The value a setting's text takes (an environment variable or a flag): plain decimal digits for a
 * number (no "1e9", "0x10" or "Infinity"), `true`/`false` for a boolean; undefined when not valid.
 */
export function parseSettingText<T extends SettingValue>(setting: Setting<T>, text: string): T | undefined {
  const trimmed = text.trim();
  let value: unknown = text;
  if (typeof setting.default === "number") value = /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : NaN;
  else if (typeof setting.default === "boolean")
    value = trimmed === "true" ? true : trimmed === "false" ? false : undefined;
  return setting.accepts(value) ? value : undefined;
}

/**
 * The settings of a plug-in list, one per key: two plug-ins may declare the same setting object (the
 * features that share a bound), never two different settings under one key, file key, variable or flag,
 * nor one under a key of the core's (it would shadow the core's setting).
 */
export function distinctSettings(lists: readonly (readonly Setting[] | undefined)[]): Setting[] {
  const core = Object.keys(FILE_SCHEMA);
  const byName = new Map<string, Setting | "core">([...core, ...core.map(snakeCase)].map((name) => [name, "core"]));
  const result: Setting[] = [];
  for (const setting of lists.flatMap((list) => list ?? [])) {
    if (result.includes(setting)) continue;
    const names = [setting.key, setting.fileKey, setting.env, setting.flag].filter((n) => n !== undefined);
    for (const name of names) {
      const taken = byName.get(name);
      if (taken === "core")
        throw new ConfigError(`a plug-in setting is named "${name}", a setting of tsq's own; rename it`);
      if (taken !== undefined)
        throw new ConfigError(`two settings of the plug-in list are named "${name}"; rename one of them`);
      byName.set(name, setting);
    }
    result.push(setting);
  }
  return result;
}
