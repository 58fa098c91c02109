/**
 * Reads `config/tsq.yml` (or the file named by `-C`) into typed, validated settings, the way Sidekiq
 * reads `config/sidekiq.yml`: snake_case keys, with or without a leading colon (`:concurrency:`), and
 * any top-level mapping that is not an option is an environment section. The section named by the
 * environment is merged shallowly over the top level (Sidekiq: `opts.merge(opts.delete(env) || {})`);
 * the others are ignored. Every other unknown key is an error, so a typo never falls back to a default.
 * Besides the core's keys (fileSchema.ts), the file takes the settings the running plug-ins declare
 * (`features`, settings.ts), checked by their own bounds and returned under `features` by option key.
 */
import { readFileSync } from "node:fs";
import type * as Yaml from "yaml";
import { loadDependency } from "../dependency.js";
import { ConfigError } from "../../wire/errors.js";
import { type Entry, applySchema, entriesOf, fail, isMapping, snakeCase, unknownKey } from "./checks.js";
import type { Setting, SettingValue } from "./settings.js";
import { FILE_SCHEMA, type FileSettings } from "./fileSchema.js";

import { isClusterUrl } from "../redis/clusterUrl.js";

export type { CapsuleFileConfig, ClusterFileConfig, FileSettings, MetricsFileConfig } from "./fileSchema.js";

/**
 * Reads and validates one config file. `label` is the path as the user knows it (e.g. `config/tsq.yml`),
 * used in every error message; `environment` picks the section to merge over the top level; `features`
 * are the plug-ins' settings whose keys the file may hold.
 */
/**
 * "skip": leave out the top-level keys no setting knows, for an entry point's first reading, made only to
 * find the job module whose plug-ins may declare them; it then reads the file again with "refuse".
 */
export type UnknownKeys = "refuse" | "skip";

export function loadConfig(
  path: string,
  environment: string,
  label: string = path,
  features: readonly Setting[] = [],
  unknownKeys: UnknownKeys = "refuse",
): FileSettings {
  const document = parseYaml(readText(path, label), label);
  if (document === null || document === undefined) return {}; // an empty file sets nothing
  const own = new Map(features.flatMap((setting) => (setting.fileKey ? [[setting.fileKey, setting] as const] : [])));
  const known = new Set([...Object.keys(FILE_SCHEMA).map(snakeCase), ...own.keys()]);
  const merged = new Map<string, Entry>();
  let section: Entry[] = [];
  for (const entry of entriesOf(document, { file: label, path: "" })) {
    if (known.has(entry.key)) merged.set(entry.key, entry);
    else if (!isMapping(entry.value)) {
      if (unknownKeys === "refuse") unknownKey(label, entry.path, known);
    } else if (entry.key === environment) section = entriesOf(entry.value, { file: label, path: entry.key });
  }
  for (const entry of section) if (unknownKeys === "refuse" || known.has(entry.key)) merged.set(entry.key, entry);
  const core = [...merged.values()].filter((entry) => !own.has(entry.key));
  const settings = applySchema(core, FILE_SCHEMA, label);
  checkShardUrls(settings, label);
  const featureValues = [...merged.values()].flatMap((entry) => {
    const setting = own.get(entry.key);
    return setting ? [[setting.key, featureValue(setting, entry, label)] as const] : [];
  });
  return featureValues.length > 0 ? { ...settings, features: Object.fromEntries(featureValues) } : settings;
}

/** A feature's value from the file, checked as the core's are: the message names the file and the key. */
function featureValue(setting: Setting, entry: Entry, label: string): SettingValue {
  return setting.accepts(entry.value)
    ? entry.value
    : fail({ file: label, path: entry.path }, setting.expected, entry.value);
}

/** A shard naming no Redis is a slot group of a Redis Cluster, which the same file must name. */
function checkShardUrls(settings: FileSettings, label: string): void {
  const top = settings.redisUrl ?? settings.redis;
  if (top !== undefined && isClusterUrl(top)) return;
  const bare = settings.shards?.find((shard) => shard.url === "");
  if (bare !== undefined)
    throw new ConfigError(
      `${label}: shards.${bare.name} needs exactly one of url or redis (a shard without one is a slot group of ` +
        "the Redis Cluster the file names in redis: { cluster: [...] })",
    );
}

function readText(path: string, label: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`${label}: cannot read the config file (${reason}); check the path and its permissions`);
  }
}

function parseYaml(text: string, label: string): unknown {
  // `merge: true` honours `<<: *default`, which Rails-style files use to share settings between sections.
  const { parseDocument } = loadDependency("yaml") as typeof Yaml;
  const document = parseDocument(text, { merge: true });
  const error = document.errors[0];
  if (error) {
    const [start] = error.linePos ?? [];
    const position = start ? ` at line ${start.line}, column ${start.col}` : "";
    const reason = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`${label}: invalid YAML${position}: ${reason}; fix the syntax there`);
  }
  try {
    return document.toJS();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ConfigError(`${label}: cannot read the YAML (${reason}); simplify the anchors and aliases`);
  }
}
