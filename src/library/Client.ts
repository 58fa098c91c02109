/**
 * The package's `Client` and `configureClient`: the core ones (src/client), with every built-in feature
 * when `plugins` is not given (packagePlugins.ts). The core Client knows no feature, so this is where
 * the package's default list is applied: when a Client is built, not when the package is imported.
 *
 *   configureClient();                                   // at boot: REDIS_URL, every built-in feature
 *   const client = new Client({ redis: url });           // the same features, its own connection
 */
import { Client as CoreClient, type ClientOptions } from "../client/Client.js";
import { configureClient as setDefaultClient } from "../client/defaultClient.js";
import { packagePlugins } from "../packagePlugins.js";

export class Client extends CoreClient {
  constructor(options: ClientOptions = {}) {
    super(options.plugins === undefined ? { ...options, plugins: packagePlugins() } : options);
  }
}

/**
 * Sets the default client: the one `Job.performAsync` and friends push through outside a job. Called
 * once at boot; with no argument it connects to REDIS_URL (then redis://127.0.0.1:6379/0) lazily, with
 * every built-in feature. The previous default client is closed if it owned its connection.
 */
export function configureClient(options: ClientOptions | CoreClient = { lazyConnect: true }): CoreClient {
  return setDefaultClient(options instanceof CoreClient ? options : new Client(options));
}
