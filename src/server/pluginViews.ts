/**
 * A plug-in's admin views: read-only status a feature keeps in Redis, shown by `tsqctl <name>` (a table,
 * or the state as JSON with --json). The admin tools own the command line and the formatting and hand a
 * view its table helper, so a feature declares what to read and how to lay it out without importing them.
 */
import type { Redis } from "ioredis";

/** Lines of an aligned table, the headings first (the admin tools' own formatter). */
export type TableLines = (headings: readonly string[], rows: readonly (readonly string[])[]) => string[];

export interface PluginView<State = unknown> {
  /** The command: lower-case letters and dashes, not one of tsqctl's own. */
  readonly name: string;
  /** One line for `tsqctl --help`. */
  readonly description: string;
  /** The state, read from Redis (printed as is with --json). Reads only. */
  read(redis: Redis): Promise<State>;
  /** The state for a terminal: lines, without the final newline. */
  text(state: State, table: TableLines): string;
}

/** Checks a view's shape where it is declared (`views: [defineView({...})]`), typed by its state. */
export function defineView<State>(view: PluginView<State>): PluginView<State> {
  if (!/^[a-z][a-z-]*$/.test(view.name))
    throw new TypeError(
      `defineView: a view's name is its tsqctl command: lower-case letters and dashes, got "${view.name}"`,
    );
  return view;
}
