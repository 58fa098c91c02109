/** Entry point of a `tsq-cluster` child process (node:cluster `exec`): a worker with the built-in features. */
import { runChild } from "../cluster/child.js";
import { builtinPlugins } from "../plugins.js";
import { pluginsFromEnv } from "./pluginsFromEnv.js";
import { loadRegistry } from "./tsq.js";

void runChild(pluginsFromEnv(builtinPlugins()), loadRegistry);
