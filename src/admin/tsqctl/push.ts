/**
 * `tsqctl push <class> [json-args]`: enqueues one job, like `Sidekiq::Client.push` from a console, and
 * prints its jid.
 *
 *   tsqctl push HardJob '["bob", 5]' -q critical --in 60 --retry 3
 */
import { shardMap, type ShardFlags } from "./shards.js";
import { DEFAULT_SHARD } from "../../platform/shards/ShardMap.js";
import { InvalidArgumentError, Option, type Command } from "commander";
import { Client, EPOCH_THRESHOLD, type PushItem } from "../../client/Client.js";
// The package's Client: a push runs every built-in feature (a limited class is admitted, a duplicate dropped).
import { packagePlugins } from "../../packagePlugins.js";
import { verifyStrictArgs } from "../../client/strictArgs.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { RedisUnreachableError } from "../../wire/errors.js";
import { normalizeItem } from "../../client/normalize.js";
import { currentRouter } from "../../platform/attributes/WorkerRouter.js";
import {
  addRedisUrlOption,
  CONNECT_TIMEOUT_MS,
  isUnreachable,
  resolveRedisUrl,
  unreachable,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { addModuleOptions, loadJobModule, type ModuleFlags } from "./jobModule.js";

interface PushFlags extends ModuleFlags, ShardFlags {
  queue?: string;
  in?: number;
  at?: number;
  retry?: boolean | number;
  redisUrl?: string;
}

/** Above this an --at value is milliseconds, not seconds (1e11 s is the year 5138). */
const MS_THRESHOLD = 1e11;

function parseNumber(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value))
    throw new InvalidArgumentError(`${flag} must be a number of seconds.`);
  return value;
}

function parseQueue(text: string): string {
  if (text === "") throw new InvalidArgumentError("--queue must not be empty.");
  return text;
}

function parseIn(text: string): number {
  const seconds = parseNumber("--in", text);
  if (seconds < 0) throw new InvalidArgumentError("--in must not be negative.");
  if (seconds >= EPOCH_THRESHOLD)
    throw new InvalidArgumentError("--in is seconds from now; use --at for epoch seconds.");
  return seconds;
}

function parseAt(text: string): number {
  const epoch = parseNumber("--at", text);
  if (epoch >= MS_THRESHOLD) throw new InvalidArgumentError("--at takes epoch seconds; this looks like milliseconds.");
  return epoch;
}

function parseRetry(text: string): boolean | number {
  if (text === "true") return true;
  if (text === "false") return false;
  if (/^\d+$/.test(text)) return Number(text);
  throw new InvalidArgumentError("--retry must be true, false or a number of retries.");
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** Parses `[json-args]`: it must be a JSON array, whose elements become the job's arguments. */
export function parseJsonArgs(text: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`json-args is not valid JSON (${(error as Error).message}); quote it, e.g. '["bob", 5]'`);
  }
  if (!Array.isArray(value)) {
    throw new UsageError(
      `json-args must be a JSON array of job arguments, e.g. '["bob", 5]'; got ${describeJson(value)}`,
    );
  }
  return value;
}

/** Epoch seconds to run at, or undefined for now (a time not in the future enqueues now, as in Sidekiq). */
function runAt(flags: PushFlags): number | undefined {
  const now = nowSeconds();
  const at = flags.in !== undefined ? now + flags.in : flags.at;
  return at !== undefined && at > now ? at : undefined;
}

async function push(className: string, jsonArgs: string, flags: PushFlags, io: CliIO): Promise<void> {
  const args = parseJsonArgs(jsonArgs);
  // Checked again by the client; here so that bad arguments are reported before connecting.
  verifyStrictArgs(args);
  const url = resolveRedisUrl(flags.redisUrl, io);
  const at = runAt(flags);
  // With a job module (-r, or config require: when there are routing_rules) a class it exports is pushed
  // as itself: its options, version and routed queue apply, as for performAsync. Rules route any class.
  const { registry, router } = await loadJobModule(flags, io, true);
  const item: PushItem = { class: registry.get(className) ?? className, args };
  if (flags.queue !== undefined) item.queue = flags.queue;
  if (flags.retry !== undefined) item.retry = flags.retry;
  if (at !== undefined) item.at = at;
  // On a sharded Redis (config shards:) the job goes to its queue's shard, unless one Redis was chosen.
  const map = flags.redisUrl === undefined && flags.shard === undefined ? shardMap(flags, io) : undefined;
  const home = map?.sharded ? map.urlOf(DEFAULT_SHARD) : url;
  const jid = await withRedis(home, async (redis) => {
    // The queue's shard is opened by the client: the same deadline, and an error naming that shard.
    const client = new Client({
      redis,
      plugins: packagePlugins(),
      router,
      commandTimeoutMs: CONNECT_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS / 1000,
      ...(map?.sharded ? { shards: { map } } : {}),
    });
    try {
      // One push and out: the fleet is read first, so its timestamps are those the Ruby processes read.
      await client.fleetVersion.read(redis);
      return await client.push(item);
    } catch (error) {
      // The client says "unreachable" two ways: a command past its deadline (a Redis that stopped
      // answering), or RedisUnreachableError when no connection came up in time (nothing listening).
      const refused = error instanceof RedisUnreachableError;
      if (!map?.sharded || !(refused || isUnreachable(error))) throw error;
      const shard = map.shardOf(normalizeItem(item, router ?? currentRouter(), "seconds", client.optionKeys).queue);
      const reason = refused ? (/^cannot reach Redis at \S+: (.*?) \(waited/.exec(error.message)?.[1] ?? "") : "";
      const seconds = CONNECT_TIMEOUT_MS / 1000;
      const why = refused
        ? `${reason || "no connection"} (no connection within ${seconds} s)`
        : `no answer within ${seconds} s`;
      throw unreachable(map.urlOf(shard), `${why}; nothing was written`, shard);
    } finally {
      await client.close();
    }
  });
  // No middleware is configured here, so the push is never refused; be explicit if it ever is.
  if (jid === null) throw new Error("the push was stopped by a client middleware");
  io.out(`${jid}\n`);
}

export function registerPush(program: Command, io: CliIO): void {
  const command = program
    .command("push")
    .description("enqueue one job and print its jid")
    .argument("<class>", "job class name as it appears on the wire, e.g. HardJob")
    .argument("[json-args]", "the job's arguments as a JSON array", "[]")
    .option(
      "-q, --queue <name>",
      "queue to push to (default: the class's queue, its routing rule, or default)",
      parseQueue,
    )
    .addOption(new Option("--in <seconds>", "run this many seconds from now").argParser(parseIn).conflicts("at"))
    .addOption(new Option("--at <epoch-seconds>", "run at this time, in epoch seconds").argParser(parseAt))
    .option("--retry <true|false|n>", "retry on failure: true (25 times), false, or a number of retries", parseRetry);
  addRedisUrlOption(addModuleOptions(command)).action((className: string, jsonArgs: string, flags: PushFlags) =>
    push(className, jsonArgs, flags, io),
  );
}
