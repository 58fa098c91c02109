/**
 * The schedules a process runs: the config file's `cron:` entries plus each registered job class's
 * `static cron`, checked once at startup so a bad schedule stops the process with a message naming it
 * instead of silently never firing.
 *
 *   export class NightlyReport extends Job {
 *     static cron = { cron: "0 3 * * *", tz: "Europe/Paris", args: ["daily"] };
 *     async perform(kind: string) { ... }
 *   }
 */
import { ConfigError } from "../../wire/errors.js";
import type { Registry } from "../../server/Registry.js";
import { CRON_NAME_FORMAT, isCronName, type CronClassEntry, type CronEntry } from "../../platform/config/cronEntry.js";
import { cronProblem } from "./expression.js";

/**
 * Returns every schedule (config entries, then class declarations), or throws a ConfigError naming the
 * first bad one: malformed expression or time zone, unknown job class, or a name used twice.
 */
export function validateCron(entries: readonly CronEntry[], registry: Registry): CronEntry[] {
  const all = [...entries, ...classSchedules(registry)];
  const seen = new Map<string, string>();
  for (const entry of all) {
    const where = `cron schedule "${entry.name}" (${entry.source})`;
    const earlier = seen.get(entry.name);
    if (earlier !== undefined)
      throw new ConfigError(`${where}: the name is also used by ${earlier}; give each schedule its own name`);
    seen.set(entry.name, entry.source);
    if (!isCronName(entry.name)) throw new ConfigError(`${where}: the name must use ${CRON_NAME_FORMAT}`);
    const problem = cronProblem(entry.cron, entry.tz);
    if (problem !== undefined) throw new ConfigError(`${where}: ${problem}`);
    if (registry.get(entry.class) === undefined) {
      const known = registry.names().join(", ") || "none";
      throw new ConfigError(
        `${where}: class "${entry.class}" is not a registered job class (registered: ${known}); ` +
          "fix the name or export the class from the job module (-r)",
      );
    }
  }
  return all;
}

/** The `static cron` declarations of the registered classes, as entries. */
export function classSchedules(registry: Registry): CronEntry[] {
  const entries: CronEntry[] = [];
  for (const jobName of registry.names()) {
    const declared = (registry.get(jobName) as { cron?: unknown } | undefined)?.cron;
    if (declared === undefined) continue;
    const source = `static cron of ${jobName}`;
    const list = Array.isArray(declared) ? declared : [declared];
    if (list.length === 0) continue;
    list.forEach((item: unknown, index) => {
      const at = list.length > 1 ? `${source}[${index}]` : source;
      const spec = typeof item === "string" ? { cron: item } : declaration(item, at);
      if (list.length > 1 && spec.name === undefined) {
        throw new ConfigError(`${at}: a class with several schedules must name each one (name: "...")`);
      }
      entries.push({
        name: spec.name ?? jobName,
        cron: spec.cron,
        class: jobName,
        args: spec.args ?? [],
        enabled: spec.enabled ?? true,
        catchUp: spec.catchUp ?? false,
        source: at,
        ...(spec.queue === undefined ? {} : { queue: spec.queue }),
        ...(spec.tz === undefined ? {} : { tz: spec.tz }),
        ...(spec.description === undefined ? {} : { description: spec.description }),
      });
    });
  }
  return entries;
}

/** Checks the shape of one object declaration; the expression itself is checked by validateCron. */
function declaration(item: unknown, at: string): CronClassEntry {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    throw new ConfigError(
      `${at}: expected a cron expression string or { cron, args?, queue?, tz?, ... }, got ${JSON.stringify(item)}`,
    );
  }
  const spec = item as Record<string, unknown>;
  const known = new Set(["name", "cron", "args", "queue", "tz", "description", "enabled", "catchUp"]);
  const unknown = Object.keys(spec).find((key) => !known.has(key));
  if (unknown !== undefined)
    throw new ConfigError(`${at}: unknown field "${unknown}" (known: ${[...known].join(", ")})`);
  const expect = (ok: boolean, field: string, what: string) => {
    if (!ok) throw new ConfigError(`${at}: ${field} must be ${what}, got ${JSON.stringify(spec[field])}`);
  };
  const optional = (field: string, type: "string" | "boolean") =>
    expect(
      spec[field] === undefined || (typeof spec[field] === type && spec[field] !== ""),
      field,
      `a non-empty ${type}`,
    );
  expect(typeof spec.cron === "string" && spec.cron.trim() !== "", "cron", "a cron expression string");
  expect(spec.args === undefined || Array.isArray(spec.args), "args", "an array of job arguments");
  for (const field of ["name", "queue", "tz", "description"]) optional(field, "string");
  for (const field of ["enabled", "catchUp"]) optional(field, "boolean");
  return spec as unknown as CronClassEntry;
}
