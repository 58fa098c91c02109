/**
 * The config file's `cron:` section: each schedule name maps to { cron, class, queue?, args?, tz?,
 * description?, enabled?, catch_up? }, checked as a whole (expression, time zone) before anything runs.
 */
import { ConfigError } from "../../wire/errors.js";
import type { CronEntry } from "./cronEntry.js";
import { CRON_NAME_FORMAT, isCronName } from "./cronEntry.js";
import { cronProblem, timeZoneProblem } from "./cronCheck.js";
import { applySchema, boolean, entriesOf, fail, jobArgs, nonEmptyString, type Schema, type Where } from "./checks.js";

/** One `cron:` entry as written; `cron` and `class` are required, checked by `cronSection`. */
interface CronFileEntry {
  cron?: string;
  class?: string;
  queue?: string;
  args?: unknown[];
  tz?: string;
  description?: string;
  enabled?: boolean;
  catchUp?: boolean;
}

const CRON_ENTRY: Schema<CronFileEntry> = {
  cron: nonEmptyString,
  class: nonEmptyString,
  queue: (value, at) =>
    typeof value === "string" && /^[^\s,]+$/.test(value) ? value : fail(at, "a queue name", value),
  args: jobArgs,
  tz: nonEmptyString,
  description: nonEmptyString,
  enabled: boolean,
  catchUp: boolean,
};

/** `cron:` maps a schedule name to { cron, class, queue?, args?, tz?, description?, enabled?, catch_up? }. */
export function cronSection(value: unknown, at: Where): CronEntry[] {
  if (value === null) return []; // `cron:` with nothing under it
  return entriesOf(value, at).map(({ key: name, value: body, path }) => {
    if (!isCronName(name)) throw new ConfigError(`${at.file}: ${path}: a schedule name must use ${CRON_NAME_FORMAT}`);
    const entry = applySchema(entriesOf(body, { file: at.file, path }), CRON_ENTRY, at.file);
    if (entry.cron === undefined)
      throw new ConfigError(`${at.file}: ${path}.cron is missing; give an expression such as "0 3 * * *"`);
    if (entry.class === undefined)
      throw new ConfigError(`${at.file}: ${path}.class is missing; name the job class to enqueue`);
    const zone = entry.tz === undefined ? undefined : timeZoneProblem(entry.tz);
    if (zone !== undefined) throw new ConfigError(`${at.file}: ${path}.tz: ${zone}`);
    const problem = cronProblem(entry.cron, entry.tz);
    if (problem !== undefined) throw new ConfigError(`${at.file}: ${path}.cron: ${problem}`);
    return {
      name,
      cron: entry.cron,
      class: entry.class,
      args: entry.args ?? [],
      enabled: entry.enabled ?? true,
      catchUp: entry.catchUp ?? false,
      source: at.file,
      ...(entry.queue === undefined ? {} : { queue: entry.queue }),
      ...(entry.tz === undefined ? {} : { tz: entry.tz }),
      ...(entry.description === undefined ? {} : { description: entry.description }),
    };
  });
}
