/**
 * Reads `config/tsq.yml` (or the file named by `-C`) into typed, validated settings, the way Sidekiq
 * reads `config/sidekiq.yml`: snake_case keys, with or without a leading colon (`:concurrency:`), and
 * any top-level mapping that is not an option is an environment section. The section named by the
 * environment is merged shallowly over the top level (Sidekiq: `opts.merge(opts.delete(env) || {})`);
 * the others are ignored. Every other unknown key is an error, so a typo never falls back to a default.
 */
import { readFileSync } from "node:fs";
import type * as Yaml from "yaml";
import { loadDependency } from "../dependency.js";
import { ConfigError } from "../../wire/errors.js";
import { type Entry, applySchema, entriesOf, isMapping, snakeCase, unknownKey } from "./checks.js";
import { FILE_SCHEMA, type FileSettings } from "./fileSchema.js";

export type { CapsuleFileConfig, ClusterFileConfig, FileSettings, MetricsFileConfig } from "./fileSchema.js";

/**
 * Reads and validates one config file. `label` is the path as the user knows it (e.g. `config/tsq.yml`),
 * used in every error message; `environment` picks the section to merge over the top level.
 */
export function loadConfig(path: string, environment: string, label: string = path): FileSettings {
  const document = parseYaml(readText(path, label), label);
  if (document === null || document === undefined) return {}; // an empty file sets nothing
  const known = new Set(Object.keys(FILE_SCHEMA).map(snakeCase));
  const merged = new Map<string, Entry>();
  let section: Entry[] = [];
  for (const entry of entriesOf(document, { file: label, path: "" })) {
    if (known.has(entry.key)) merged.set(entry.key, entry);
    else if (!isMapping(entry.value)) unknownKey(label, entry.path, known);
    else if (entry.key === environment) section = entriesOf(entry.value, { file: label, path: entry.key });
  }
  for (const entry of section) merged.set(entry.key, entry);
  return applySchema([...merged.values()], FILE_SCHEMA, label);
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
