/**
 * The plug-in list a Client or worker built from the core classes (src/client, src/server) runs when
 * its options name none: none, unless the process set a list at boot with `useDefaultPlugins` (tsq's
 * own tests do, from TSQ_PLUGINS). Importing the package sets nothing: the package's `Client`,
 * `Worker` and `configureClient` fall back to every built-in feature themselves (src/packagePlugins.ts),
 * a `Cluster` to its job module's list (src/library/processPlugins.ts). A Client or worker given
 * `plugins` (even `[]`) ignores it.
 */
import type { ClientPlugin } from "./plugin.js";

let defaults: readonly ClientPlugin[] | undefined;

/** Sets the list once, at boot, before any Client or worker is built. */
export function useDefaultPlugins(plugins: readonly ClientPlugin[]): void {
  defaults = [...plugins];
}

/** The list set at boot; undefined when none was. */
export function defaultPlugins<P extends ClientPlugin = ClientPlugin>(): readonly P[] | undefined {
  return defaults as readonly P[] | undefined;
}
