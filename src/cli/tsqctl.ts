/**
 * `tsqctl`, the admin command (like `Sidekiq::API` from a console). Each command group lives in
 * `tsqctl/<group>.ts` and registers itself on the program here.
 *
 * Exit codes: 0 done, 1 failed (Redis unreachable, no such job or process, a "no" to a confirmation),
 * 2 bad usage (unknown flag, bad arguments, a job the client refuses, a destructive command without
 * --yes when there is no terminal to ask on).
 */
import { addShardOptions, applyShardOption } from "../admin/tsqctl/shards.js";
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { RedisUnreachableError, TsqError } from "../wire/errors.js";
import { redactText, registerArgvSecrets, registerUrlSecrets } from "../platform/secrets.js";
import { addJsonOption, addRedisUrlOption, processIO, UsageError, type CliIO } from "../admin/tsqctl/common.js";
import { registerActions } from "../admin/tsqctl/actions.js";
import { registerCron } from "../admin/tsqctl/cron.js";
import { registerPluginViews } from "../admin/tsqctl/pluginViews.js";
import { packagePlugins } from "../packagePlugins.js";
import { registerProcesses } from "../admin/tsqctl/processes.js";
import { registerPush } from "../admin/tsqctl/push.js";
import { registerSets } from "../admin/tsqctl/sets.js";
import { registerStats } from "../admin/tsqctl/stats.js";
import { registerSwitches } from "../admin/tsqctl/switches.js";
import { registerPause } from "../admin/tsqctl/pause.js";
import { registerTop } from "../admin/tsqctl/top.js";
import { registerMetrics } from "../admin/tsqctl/metrics.js";
import { registerWorkers } from "../admin/tsqctl/workers.js";
import { registerWeb } from "../admin/tsqctl/web.js";
import { registerBatches } from "../admin/tsqctl/batches.js";
import { registerCancel } from "../admin/tsqctl/cancel.js";
import { registerWaiting } from "../admin/tsqctl/waiting.js";

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

function packageVersion(): string {
  const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

export function buildProgram(io: CliIO = processIO): Command {
  const program = new Command("tsqctl")
    .description("Administer tsq and Sidekiq jobs in Redis")
    .version(packageVersion(), "-V, --version")
    // Settings below are inherited by every command registered after them.
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError()
    .allowExcessArguments(false);
  // One line per command group (src/admin/tsqctl/<group>.ts), in the order --help lists them.
  registerPush(program, io);
  registerStats(program, io);
  registerSets(program, io);
  registerActions(program, io);
  registerProcesses(program, io);
  registerTop(program, io);
  registerMetrics(program, io);
  registerCron(program, io);
  registerSwitches(program, io);
  registerPause(program, io);
  registerWorkers(program, io);
  registerBatches(program, io);
  // The features' status views (`limits`, `ratelimits`), declared by their plug-ins.
  registerPluginViews(program, io, packagePlugins());
  registerWeb(program, io);
  registerCancel(program, io);
  registerWaiting(program, io);
  // Global options may come before the command too (`tsqctl --redis-url URL stats`), as kubectl, git -C
  // and redis-cli users type them; the command's own copy, after it, wins.
  addShardOptions(addRedisUrlOption(addJsonOption(program)));
  program.hook("preAction", (root, action) => {
    for (const [key, value] of Object.entries(root.opts())) {
      if (action !== root && action.getOptionValue(key) === undefined) action.setOptionValue(key, value);
    }
    applyShardOption(action, io);
  });
  return program;
}

/** Runs tsqctl with the arguments after the program name. Resolves to the process exit code. */
export async function main(argv: string[], rawIO: CliIO = processIO): Promise<number> {
  // Whatever fails, no password reaches the terminal: commander echoes mistyped flags with their values.
  const io: CliIO = {
    ...rawIO,
    out: (text) => rawIO.out(redactText(text)),
    err: (text) => rawIO.err(redactText(text)),
  };
  registerUrlSecrets(io.env.REDIS_URL);
  registerArgvSecrets(argv);
  const program = buildProgram(io);
  let prefix = "tsqctl";
  program.hook("preAction", (_program, action) => {
    prefix = `tsqctl ${action.name()}`;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT_OK;
  } catch (error) {
    return report(error, prefix, io);
  }
}

function report(error: unknown, prefix: string, io: CliIO): number {
  // Commander has already printed its message (and the usage); --help and --version exit with 0.
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  const message = error instanceof Error ? error.message : String(error);
  // Redis away is not a usage mistake: the command was right, try again later (exit 1).
  if ((error instanceof UsageError || error instanceof TsqError) && !(error instanceof RedisUnreachableError)) {
    io.err(`${prefix}: ${message}\n(run '${prefix} --help' for usage)\n`);
    return EXIT_USAGE;
  }
  io.err(`${prefix}: ${message}\n`);
  return EXIT_FAILED;
}
