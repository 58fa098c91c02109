/**
 * A private redis-server for integration tests: a free loopback port, no persistence, a scratch data
 * folder removed on stop. Never the machine's Redis on 6379.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomInt } from "node:crypto";
import { connect } from "../platform/redis/connection.js";
import { sleep } from "../platform/util/sleep.js";

/**
 * Ports below Linux's ephemeral range (32768-60999), so one the kernel hands to an outgoing connection
 * can never be taken from under a server that restarts; tsq's own tests pick from the same range.
 */
const PORTS = { low: 20_000, high: 32_000 };
/** Milliseconds a new server gets to answer PING. */
const START_DEADLINE_MS = 10_000;
/** Ports tried when another process takes the chosen one first. */
const ATTEMPTS = 20;

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Starts redis-server (`binary`, default from PATH) on a free loopback port; resolves once it answers. */
export async function startRedisServer(binary = "redis-server"): Promise<RedisServer> {
  let lastProblem = "";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = PORTS.low + randomInt(PORTS.high - PORTS.low);
    if (!(await canListen(port))) continue;
    const dir = mkdtempSync(join(tmpdir(), "tsq-test-redis-"));
    const child = spawn(
      binary,
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-2000));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
    const stop = async () => {
      child.kill("SIGTERM");
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    };
    const outcome = await Promise.race([answers(port, child.pid), spawnError]);
    if (outcome === true) return { port, url: `redis://127.0.0.1:${port}/0`, stop };
    await stop();
    if (outcome instanceof Error) {
      const missing = (outcome as NodeJS.ErrnoException).code === "ENOENT";
      throw new Error(
        missing
          ? `startTestWorker needs redis-server, not found as ${JSON.stringify(binary)}: install it ` +
              "(apt-get install redis-server, brew install redis) or pass { redisServer: '/path/to/redis-server' }"
          : `could not start ${binary}: ${outcome.message}`,
      );
    }
    lastProblem = output.trim().split("\n").pop() ?? "";
  }
  throw new Error(`could not start a private redis-server after ${ATTEMPTS} ports; last said: ${lastProblem}`);
}

/** True once the server on `port` answers PING and is process `pid` (not another one that took the port). */
async function answers(port: number, pid: number | undefined): Promise<boolean> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    const probe = connect(`redis://127.0.0.1:${port}/0`, { name: "tsq-test-probe", lazy: true });
    probe.options.retryStrategy = () => null; // one try per probe: the loop retries
    try {
      const info = await probe.info("server");
      return Number(/process_id:(\d+)/.exec(info)?.[1]) === pid;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    await sleep(50);
  }
  return false;
}
