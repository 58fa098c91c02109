/**
 * Typos in job options: `static options = { queu: "critical", retry: 5 }` compiles (the valid `retry`
 * defeats TypeScript's weak-type check) and would push to `default` with `queu` in the payload. A key
 * within 2 edits of a known option is refused, with the option it is near; any other unknown key passes,
 * as a Sidekiq custom option (GitLab's worker attributes travel that way). Checked as a worker is
 * built (its classes' options, server/workerContext.ts) and at every push (its class's options,
 * `set({...})`'s).
 *
 * Known keys: the core's, and those each plug-in of the Client's or Worker's own list declares
 * (`jobOptions`, client/plugin.ts): a Client checks its pushes against its plug-ins, a worker its
 * classes against its own, so two in one process never see each other's. Compared in snake_case, as on
 * the wire: `retry_queue` is `retryQueue`.
 */
import { editDistance, nearestKey } from "../platform/util/unknownKeys.js";
import { toSnakeCase } from "./options.js";
import type { ClientPlugin } from "./plugin.js";

/** The core's JobOptions (client/options.ts) and what `set` adds (client/Job.ts). */
const CORE = ["queue", "retry", "retryQueue", "retryFor", "backtrace", "dead", "tags", "wait", "waitUntil", "client"];

/** Bound of each cache below: an app's custom options recur on every push, but payload-made keys must not grow them. */
const MAX_VERDICTS = 1_000;

export class JobOptionKeys {
  /** snake_case → the option's name as written (camelCase), for every known option. */
  private readonly known: Map<string, string>;
  /** Verdicts on unknown keys already looked at. */
  private readonly verdicts = new Map<string, string | undefined>();
  /** Keys as given → snake_case: the same few keys come with every push, a regex each is not needed. */
  private readonly snakeOf = new Map<string, string>();
  /** Options objects (a class's `static options`) found clean: checked once. */
  private readonly clean = new WeakSet<object>();

  constructor(plugins: readonly ClientPlugin[]) {
    const names = [...CORE, ...plugins.flatMap((plugin) => plugin.jobOptions ?? [])];
    this.known = new Map(names.map((name) => [toSnakeCase(name), name]));
  }

  /**
   * The message refusing the first key of `options` that is a near miss of a known option, or undefined:
   * "HardJob: unknown job option `queu` in static options (did you mean `queue`?) ...". A class's
   * `static options` (`where` "static options") is checked once; a fresh `set({...})` object every time
   * (remembering those would cost a WeakSet entry per push, ~2.5 µs).
   */
  typo(className: string, options: object | undefined, where: string): string | undefined {
    if (options === undefined || options === null || typeof options !== "object") return undefined;
    const given = Object.keys(options);
    if (given.length === 0) return undefined; // most pushes: `performAsync` without `set`
    if (this.clean.has(options)) return undefined;
    for (const key of given) {
      const near = this.nearMiss(key);
      if (near !== undefined)
        return (
          `${className}: unknown job option \`${key}\` in ${where} (did you mean \`${near}\`?). ` +
          "A custom option must differ from a known one by more than 2 letters."
        );
    }
    if (where === "static options") this.clean.add(options);
    return undefined;
  }

  /** The known option `key` is a near miss of, or undefined (known, or far from every known one). */
  private nearMiss(key: string): string | undefined {
    let snake = this.snakeOf.get(key);
    if (snake === undefined) {
      if (this.snakeOf.size >= MAX_VERDICTS) this.snakeOf.clear();
      this.snakeOf.set(key, (snake = toSnakeCase(key)));
    }
    if (this.known.has(snake)) return undefined;
    if (this.verdicts.has(snake)) return this.verdicts.get(snake);
    // At most 2 edits, and fewer than half the key's letters: `id` is no typo of `jid`.
    const candidate = nearestKey(snake, this.known.keys());
    const edits = candidate === undefined ? Infinity : editDistance(snake, candidate);
    const near =
      candidate !== undefined && edits <= 2 && edits < snake.length / 2 ? this.known.get(candidate) : undefined;
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
    this.verdicts.set(snake, near);
    return near;
  }
}
