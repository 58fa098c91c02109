/** An in-process Launcher against the private Redis, for unit tests of server roles. */
import { after } from "node:test";
import { pino } from "pino";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry, type RunnableClass } from "../../src/server/Registry.js";
import { RegisteredServerConfig, type ServerConfig } from "../../src/server/serverConfig.js";
import type { QueueSpec, WorkerOptions } from "../../src/platform/config/options.js";
import type { Plugin } from "../../src/server/plugin.js";
import type { Clock } from "../../src/platform/util/clock.js";
import { testOptions } from "./options.js";

const launchers = new Set<Launcher>();
after(async () => {
  await Promise.all([...launchers].map((l) => l.stop()));
});

/** Builds (does not start) a Launcher with the given job classes; stopped after the file. */
export function testLauncher(
  url: string,
  classes: RunnableClass[] = [],
  overrides: Partial<WorkerOptions> & {
    concurrency?: number;
    queues?: QueueSpec[];
    plugins?: Plugin[];
    clock?: Clock;
    /** This worker's middleware, death and lifecycle handlers, as `new Worker({ configure })` takes them. */
    configure?: (config: ServerConfig) => void;
  } = {},
): Launcher {
  const registry = new Registry();
  for (const klass of classes) registry.register(klass);
  const { plugins, clock, configure, ...options } = overrides;
  const serverConfig = new RegisteredServerConfig();
  configure?.(serverConfig);
  const launcher = new Launcher(testOptions(url, options), registry, {
    logger: pino({ level: "silent" }),
    ownsDefaultClient: true,
    ...(plugins ? { plugins } : {}),
    ...(clock ? { clock } : {}),
    serverConfig,
  });
  launchers.add(launcher);
  return launcher;
}
