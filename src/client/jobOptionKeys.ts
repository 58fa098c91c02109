/**
 * Typos in job options: `static options = { queu: "critical", retry: 5 }` compiles (the valid `retry`
 * defeats TypeScript's weak-type check) and would push to `default` with `queu` in the payload. A key
 * within 2 edits of a known option is refused, with the option it is near; any other unknown key passes,
 * as a Sidekiq custom option (GitLab's worker attributes travel that way). Checked when a class is
 * registered (server/Registry.ts) and at every push (its class's options, `set({...})`'s).
 *
 * Known keys: the core's, and those each plug-in declares (`jobOptions`, client/plugin.ts) among the
 * process's default plug-ins and every list a Client or Worker was given. Compared in snake_case, as on
 * the wire: `retry_queue` is `retryQueue`.
 */
import { editDistance, nearestKey } from "../platform/util/unknownKeys.js";
import { defaultPlugins } from "./defaultPlugins.js";
import { toSnakeCase } from "./options.js";
import type { ClientPlugin } from "./plugin.js";

/** The core's JobOptions (client/options.ts) and what `set` adds (client/Job.ts). */
const CORE = ["queue", "retry", "retryQueue", "retryFor", "backtrace", "dead", "tags", "wait", "waitUntil", "client"];

/** Plug-ins with job options seen in a Client's or Worker's list (plug-ins are long-lived objects). */
const declared = new Set<ClientPlugin>();
let known: { snake: Map<string, string>; defaults: readonly ClientPlugin[] } | undefined;
/** Verdicts on unknown keys already looked at (an app's custom options recur on every push); bounded. */
const verdicts = new Map<string, string | undefined>();
/** Keys as given → snake_case: the same few keys come with every push, a regex each is not needed. */
const snakeOf = new Map<string, string>();
const MAX_VERDICTS = 1_000;
/** Options objects (a class's `static options`) found clean against the current known keys: checked once. */
let clean = new WeakSet<object>();

/** Adds the job options of a Client's or Worker's plug-in list to the known ones. */
export function rememberJobOptionsOf(plugins: readonly ClientPlugin[]): void {
  for (const plugin of plugins) {
    if (!plugin.jobOptions?.length || declared.has(plugin)) continue;
    declared.add(plugin);
    known = undefined;
  }
}

/** The default list before the process sets one: a constant, so the cache below keys on identity. */
const NO_PLUGINS: readonly ClientPlugin[] = Object.freeze([]);

/** snake_case → the option's name as written (camelCase), for every known option. */
function knownKeys(): Map<string, string> {
  const defaults = defaultPlugins() ?? NO_PLUGINS;
  if (known?.defaults === defaults) return known.snake; // the default list is replaced, never changed
  const names = [...CORE, ...[...defaults, ...declared].flatMap((plugin) => plugin.jobOptions ?? [])];
  known = { snake: new Map(names.map((name) => [toSnakeCase(name), name])), defaults };
  verdicts.clear();
  clean = new WeakSet();
  return known.snake;
}

/**
 * The message refusing the first key of `options` that is a near miss of a known option, or undefined:
 * "HardJob: unknown job option `queu` in static options (did you mean `queue`?) ...". A class's
 * `static options` (`where` "static options") is checked once; a fresh `set({...})` object every time
 * (remembering those would cost a WeakSet entry per push, ~2.5 µs).
 */
export function jobOptionTypo(className: string, options: object | undefined, where: string): string | undefined {
  if (options === undefined || options === null || typeof options !== "object") return undefined;
  const given = Object.keys(options);
  if (given.length === 0) return undefined; // most pushes: `performAsync` without `set`
  const keys = knownKeys();
  if (clean.has(options)) return undefined;
  for (const key of given) {
    let snake = snakeOf.get(key);
    if (snake === undefined) {
      if (snakeOf.size >= MAX_VERDICTS) snakeOf.clear();
      snakeOf.set(key, (snake = toSnakeCase(key)));
    }
    if (keys.has(snake)) continue;
    let near = verdicts.get(snake);
    if (!verdicts.has(snake)) {
      // At most 2 edits, and fewer than half the key's letters: `id` is no typo of `jid`.
      const candidate = nearestKey(snake, keys.keys());
      const edits = candidate === undefined ? Infinity : editDistance(snake, candidate);
      near = candidate !== undefined && edits <= 2 && edits < snake.length / 2 ? keys.get(candidate) : undefined;
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      verdicts.set(snake, near);
    }
    if (near !== undefined)
      return (
        `${className}: unknown job option \`${key}\` in ${where} (did you mean \`${near}\`?). ` +
        "A custom option must differ from a known one by more than 2 letters."
      );
  }
  if (where === "static options") clean.add(options);
  return undefined;
}
