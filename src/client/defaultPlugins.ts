/**
 * The plug-in list a Client or worker uses when its options name none. Importing the package ("tsq")
 * sets it to every built-in feature (src/plugins.ts); a program that imports only the core gets none.
 * Set once at start-up; a Client or worker given `plugins` (even `[]`) ignores it.
 */
import type { ClientPlugin } from "./plugin.js";

let defaults: readonly ClientPlugin[] = [];

export function useDefaultPlugins(plugins: readonly ClientPlugin[]): void {
  defaults = [...plugins];
}

export function defaultPlugins<P extends ClientPlugin = ClientPlugin>(): readonly P[] {
  return defaults as readonly P[];
}
