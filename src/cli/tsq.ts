/**
 * `tsq`: one worker process, like `sidekiq`. Parses options, loads the job module, starts a Launcher and
 * maps signals onto its lifecycle:
 *
 *   TERM, INT   graceful stop within -t seconds, exit 0; a second INT/TERM requeues running jobs now
 *   TSTP        quiet (stop fetching, keep heartbeating)
 *   TTIN        log every busy job
 *
 * The same handler serves remote signals popped from `<identity>-signals` by the heartbeat.
 */
import { builtinPlugins } from "../plugins.js";
import { pluginsOfJobModule, pluginsSwitch, settingsOfJobModule } from "../library/processPlugins.js";
import { settingsOf, type Plugin } from "../server/plugin.js";
import { ConfigError } from "../wire/errors.js";
import { configureLogger, type Logger } from "../platform/logger.js";
import { redactUrl } from "../platform/redis/connection.js";
import { Launcher } from "../server/Launcher.js";
import { serverConfig } from "../server/serverConfig.js";
import { applyWorkerV8Flags } from "../platform/v8Flags.js";
import { Registry } from "../server/Registry.js";
import { validateCron } from "../features/cron/index.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { exitOnOptionError, resolveWorkerOptions } from "../options/workerOptions.js";

export type LifecycleSignal = "TERM" | "INT" | "TSTP" | "TTIN";

/** What a worker runs from the job module: its classes and the plug-ins (library/processPlugins.ts). */
export interface JobModule {
  registry: Registry;
  plugins: Plugin[];
}

/**
 * Loads the job module: its `plugins` export first (a bad one names the module and the fix), then its
 * classes. A module that fails to load, or none given, is a startup error (exit 1).
 */
export async function loadJobModule(options: WorkerOptions, log: Logger): Promise<JobModule> {
  const registry = new Registry();
  if (!options.require) {
    throw new ConfigError("no job module: pass -r <path> or set `require:` in config/tsq.yml");
  }
  const plugins = await pluginsOfJobModule(options.require, log);
  const names = await registry.load(options.require);
  if (names.length === 0) {
    log.warn({ module: options.require }, "the job module exports no class with a perform() method; no job can run");
  }
  // A schedule naming a class this module does not export is a startup error, not a silent no-op.
  validateCron(options.cron, registry);
  return { registry, plugins };
}

/** Routes OS and remote signals to the launcher. Returns the handler for other transports (IPC). */
export function lifecycleHandler(
  launcher: Launcher,
  log: Logger,
  exit: (code: number) => void,
): (signal: LifecycleSignal) => void {
  let stopping = false;
  return (signal) => {
    switch (signal) {
      case "TERM":
      case "INT":
        if (stopping) {
          log.warn({ signal }, "second stop signal: requeueing running jobs now");
          void launcher.stopNow();
          return;
        }
        stopping = true;
        launcher.stop().then(
          () => exit(0),
          (error: unknown) => {
            log.error({ err: error }, "shutdown failed");
            exit(1);
          },
        );
        return;
      case "TSTP":
        void launcher.quiet();
        return;
      case "TTIN":
        launcher.dumpBusy();
        return;
    }
  };
}

/** Keeps a job's stray error (a throw in a timer, an unawaited rejection) from killing the process. */
export function guardProcess(log: Logger): void {
  process.on("uncaughtException", (error) => log.error({ err: error }, "uncaught exception; the worker keeps running"));
  process.on("unhandledRejection", (reason) =>
    log.error({ err: reason }, "unhandled promise rejection; the worker keeps running"),
  );
}

export async function main(argv: string[]): Promise<void> {
  applyWorkerV8Flags();
  let options: WorkerOptions;
  try {
    // First the built-in features' keys, others left aside, to find the job module ...
    options = resolveWorkerOptions(argv, process.env, process.cwd(), settingsOf(builtinPlugins()), "skip").options;
    pluginsSwitch(process.env);
  } catch (error) {
    exitOnOptionError(error, process.stderr);
  }
  const log = configureLogger(options.verbose ? { level: "debug" } : {});
  guardProcess(log);
  try {
    // ... then its own plug-ins' keys too (imported after the logger is set, as the app may set its own),
    // refusing what none declares.
    const settings = await settingsOfJobModule(options.require);
    options = resolveWorkerOptions(argv, process.env, process.cwd(), settings).options;
  } catch (error) {
    exitOnOptionError(error, process.stderr);
  }
  let registry: Registry;
  let plugins: Plugin[];
  try {
    ({ registry, plugins } = await loadJobModule(options, log));
  } catch (error) {
    log.fatal({ err: error }, error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  const exit = (code: number) => process.exit(code);
  let handle: (signal: LifecycleSignal) => void = () => {};
  const launcher = new Launcher(options, registry, {
    onRemoteSignal: (signal) => handle(signal),
    logger: log,
    plugins,
    ownsDefaultClient: true,
    // What the job module registered with configureServer as it loaded.
    serverConfig: serverConfig(),
  });
  // The metrics server and its modules (node:http among them) only for a worker that serves /metrics.
  const metrics = options.metricsPort
    ? await (await import("../metrics/serve.js")).startWorkerMetrics(launcher, log)
    : undefined;
  const lifecycle = lifecycleHandler(launcher, log, exit);
  handle = (signal) => {
    if (signal === "TERM" || signal === "INT") metrics?.setReady(false);
    lifecycle(signal);
  };
  for (const signal of ["TERM", "INT", "TSTP", "TTIN"] as const) process.on(`SIG${signal}`, () => handle(signal));
  log.info(
    { redis: redactUrl(options.redisUrl), config: options.configFile, environment: options.environment },
    "starting tsq",
  );
  try {
    await launcher.start();
    metrics?.setReady(true);
  } catch (error) {
    log.fatal({ err: error }, "startup failed");
    await launcher.stop().catch(() => {});
    process.exit(1);
  }
}
