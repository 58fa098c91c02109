/**
 * A plug-in's own settings: each a worker option key (camelCase, as `new Worker({ options })` takes
 * them) with its default and, for a number, its bounds. The plug-in lists them in `settings` (so tools
 * can name them) and reads each in `server(ctx)`, once per worker as the worker is built: a bad value
 * stops the worker there with a ConfigError naming the key, and the job path reads a plain closure
 * variable. A plug-in types its keys for apps by adding them to `WorkerOptions` (`declare module "tsq"`).
 * The config file does not take them yet (its unknown keys are refused before plug-ins load).
 */
import { ConfigError } from "../wire/errors.js";

type SettingValue = number | string | boolean;

/** Widens a literal default (`100`) to its kind (`number`). */
type Kind<T extends SettingValue> = T extends number ? number : T extends string ? string : boolean;

export interface SettingSpec<T extends SettingValue> {
  /** The worker option key, camelCase (`auditTrailMaxLength`). */
  readonly key: string;
  readonly default: T;
  /** Bounds of a number, inclusive. */
  readonly min?: number;
  readonly max?: number;
  /** A number must be a whole one. */
  readonly integer?: boolean;
}

export interface Setting<T extends SettingValue = SettingValue> extends SettingSpec<T> {
  /** The worker's value (its `options[key]`), or the default; throws ConfigError when out of bounds. */
  read(options: object): T;
}

/** Declares a setting; reads nothing until `read`. */
export function defineSetting<T extends SettingValue>(spec: SettingSpec<T>): Setting<Kind<T>> {
  const { key } = spec;
  if (!/^[a-z][A-Za-z0-9]*$/.test(key)) throw new TypeError(`defineSetting: a key is camelCase, got "${key}"`);
  return {
    ...(spec as unknown as SettingSpec<Kind<T>>), // a literal default widened to its kind
    read(options) {
      const value: unknown = (options as Record<string, unknown>)[key] ?? spec.default;
      if (typeof value !== typeof spec.default)
        throw new ConfigError(`\`${key}\` must be a ${typeof spec.default}, got ${JSON.stringify(value)}`);
      if (typeof value === "number") checkNumber(spec, value);
      return value as Kind<T>;
    },
  };
}

function checkNumber(spec: SettingSpec<SettingValue>, value: number): void {
  const bounds = `${spec.integer ? "a whole number" : "a number"} from ${spec.min ?? "-Infinity"} to ${spec.max ?? "Infinity"}`;
  const out =
    Number.isNaN(value) ||
    (spec.integer === true && !Number.isInteger(value)) ||
    (spec.min !== undefined && value < spec.min) ||
    (spec.max !== undefined && value > spec.max);
  if (out) throw new ConfigError(`\`${spec.key}\` must be ${bounds}, got ${value}`);
}
