/**
 * A private redis-server per test file, on a free loopback port, flushed before each test. Tests never
 * touch the Redis on 6379.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { randomInt } from "node:crypto";
import { join } from "node:path";
import { after, before, beforeEach } from "node:test";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";
import { useDefaultPlugins } from "../../src/client/defaultPlugins.js";
import { processPlugins } from "../../src/library/processPlugins.js";

// Set at the test process's boot, as an app sets its defaults: every Client and worker a test builds
// from the core classes has the built-in features unless it names its own list (`plugins: []` for
// plain Sidekiq OSS behaviour). TSQ_PLUGINS=none runs a suite as a fleet without any feature, as it
// does for the CLI.
useDefaultPlugins(processPlugins(undefined));

// Anything that falls back to REDIS_URL by mistake (a client built before the private server is up)
// must fail loudly rather than write into the machine's Redis on 6379: port 1 refuses connections.
process.env.REDIS_URL = "redis://127.0.0.1:1/0";

export interface RedisHandle {
  url: string;
  port: number;
  /** A connection for assertions; closed after the file. */
  redis: TsqRedis;
  /** Stops the server abruptly (for fault tests). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Saves the data, stops the server, keeps it down `downMs`, and starts it again on the same port with
   * the same data (an outage, not a wipe).
   */
  restart(downMs?: number): Promise<void>;
}

/**
 * Test servers take ports below Linux's ephemeral range (32768-60999): a port picked by the kernel for a
 * `listen(0)` or an outgoing connection elsewhere on the machine can then never be handed to a test
 * server, nor taken while one of ours is down for a restart (another test file's server answering on
 * our port would be silent chaos).
 */
const TEST_PORTS = { low: 20_000, high: 32_000 };

/** A free loopback port from TEST_PORTS, checked by binding it. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = TEST_PORTS.low + randomInt(TEST_PORTS.high - TEST_PORTS.low);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${TEST_PORTS.low} and ${TEST_PORTS.high} after 100 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function ensureBinary(): void {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (probe.error) {
    throw new Error(
      "redis-server is not installed; the tests need a real Redis. Install it with " +
        "`apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS).",
    );
  }
}

/** What `redis-cli -p <port> <args>` prints; "" when it cannot run. */
function redisCli(port: number, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const probe = spawn("redis-cli", ["-p", String(port), ...args], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    probe.stdout.on("data", (d: Buffer) => (out += d.toString()));
    probe.on("close", () => resolve(out.trim()));
    probe.on("error", () => resolve(""));
  });
}

/**
 * Until `child` answers PING on `port`. With `auth`, a NOAUTH answer counts as up (the server requires a
 * password the probe does not give); without, the answering server must be `child` itself, not another
 * one that took the port first.
 */
async function waitForPing(port: number, child: ChildProcess, log: () => string, auth = false): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${log()}`);
    const out = await redisCli(port, ["ping"]);
    if (auth && out.includes("NOAUTH")) return;
    if (out === "PONG") {
      const pid = /process_id:(\d+)/.exec(await redisCli(port, ["info", "server"]))?.[1];
      if (Number(pid) === child.pid) return;
      throw new Error(`port ${port} is answered by another redis-server (pid ${pid ?? "?"}), not the one started`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s: ${log()}`);
}

/** Starts a redis-server on `port` (a free one by default). Resolves once it answers PING. */
export async function startRedisServer(
  port?: number,
  dataDir?: string,
  extraArgs: string[] = [],
): Promise<{ port: number; child: ChildProcess; dir: string }> {
  ensureBinary();
  const chosen = port ?? (await freePort());
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "tsq-redis-"));
  const child = spawn(
    "redis-server",
    ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extraArgs],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  await waitForPing(chosen, child, () => output, extraArgs.includes("--requirepass"));
  return { port: chosen, child, dir };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/**
 * Registers before/after hooks for a private Redis and returns a handle filled in by `before`.
 * Every test starts from an empty database.
 */
export function useRedis(): RedisHandle {
  let server: { port: number; child: ChildProcess; dir: string } | undefined;
  const handle = {} as RedisHandle;
  before(async () => {
    server = await startRedisServer();
    handle.port = server.port;
    handle.url = `redis://127.0.0.1:${server.port}/0`;
    handle.redis = connect(handle.url, { name: "tsq-test" });
    handle.kill = async (signal = "SIGTERM") => {
      if (server) await stopChild(server.child, signal);
    };
    handle.restart = async (downMs = 0) => {
      if (!server) return;
      const { port, dir, child } = server;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      // SHUTDOWN SAVE writes dump.rdb even with `--save ""`, so the restarted server has the same data.
      spawnSync("redis-cli", ["-p", String(port), "shutdown", "save"]);
      await exited;
      await new Promise((r) => setTimeout(r, downMs));
      server = await startRedisServer(port, dir);
    };
  });
  beforeEach(async () => {
    await handle.redis.flushdb();
  });
  after(async () => {
    handle.redis?.disconnect();
    if (server) {
      await stopChild(server.child);
      rmSync(server.dir, { recursive: true, force: true });
    }
  });
  return handle;
}
