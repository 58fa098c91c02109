/**
 * `tsqctl web`: the dashboard on its own port until SIGINT or SIGTERM. Secrets come from the
 * environment only (`TSQ_WEB_PASSWORD`, `TSQ_WEB_TOKEN`), never from flags, which `ps` shows.
 */
import type { Command } from "commander";
import { WEB_DEFAULTS, WEB_REDIS_DEADLINE_MS, WebServer } from "../web/index.js";
import { connect } from "../../platform/redis/connection.js";
import { addRedisUrlOption, portNumber, resolveRedisUrl, UsageError, withRedis, type CliIO } from "./common.js";
import { everyShard, type ShardFlags } from "./shards.js";

interface WebFlags extends ShardFlags {
  port: number;
  host: string;
  prefix?: string;
  readOnly?: boolean;
  username?: string;
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      resolve(signal);
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}

async function web(flags: WebFlags, io: CliIO): Promise<void> {
  const url = resolveRedisUrl(flags.redisUrl, io);
  const password = io.env.TSQ_WEB_PASSWORD || undefined;
  const token = io.env.TSQ_WEB_TOKEN || undefined;
  if (flags.username !== undefined && password === undefined)
    throw new UsageError("--username needs the password in TSQ_WEB_PASSWORD");
  if (flags.prefix !== undefined && !/^\/[A-Za-z0-9._~\-/]*$/.test(flags.prefix))
    throw new UsageError("--prefix must be a path such as /tsq");
  const auth =
    password !== undefined || token !== undefined ? { username: flags.username, password, token } : undefined;
  // On a sharded Redis (config shards:, no --redis-url or --shard), every shard: the default at the
  // root, the others under /shards/<name>/.
  const shards = await everyShard(flags, io);
  const others = (shards ?? []).slice(1).map(({ shard, url: shardUrl }) => ({
    name: shard,
    redis: connect(shardUrl, { name: "tsqctl", commandTimeoutMs: WEB_REDIS_DEADLINE_MS }),
  }));
  await withRedis(shards?.[0]?.url ?? url, async (redis) => {
    const server = new WebServer({
      redis,
      shards: others,
      port: flags.port,
      host: flags.host,
      prefix: flags.prefix,
      readOnly: flags.readOnly,
      auth,
    });
    const address = await server.start();
    const notes = [
      flags.readOnly ? "read-only" : "",
      auth ? "authentication on" : "no authentication",
      others.length ? `shards ${["default", ...others.map((o) => o.name)].join(", ")}` : "",
    ].filter(Boolean);
    io.out(`tsq dashboard on ${address.url} (${notes.join(", ")}); Ctrl-C to stop\n`);
    await untilSignal();
    await server.stop();
  }).finally(() => {
    for (const { redis } of others) redis.disconnect();
  });
}

export function registerWeb(program: Command, io: CliIO): void {
  const command = program
    .command("web")
    .description("serve the web dashboard (Sidekiq Web's pages) until Ctrl-C")
    .option("--port <port>", "port to listen on", portNumber("--port"), WEB_DEFAULTS.port)
    .option("--host <host>", "address to bind (anything but loopback exposes it: use auth)", WEB_DEFAULTS.host)
    .option("--prefix <path>", "serve under this path, e.g. /tsq (behind a proxy)")
    .option("--read-only", "refuse every action; pages and /stats only")
    .option("--username <name>", "Basic auth user (default admin when TSQ_WEB_PASSWORD is set)");
  addRedisUrlOption(command).action((flags: WebFlags) => web(flags, io));
}
