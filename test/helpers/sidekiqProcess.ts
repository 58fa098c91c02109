/**
 * Runs a real Ruby `sidekiq` (Debian's 6.4.1, or with `ruby:` the 7.3 or 8.0 tree of sidekiqRuby.ts)
 * against a test's private Redis, so interop tests can check that Ruby executes what tsq enqueued.
 *
 *   useSidekiqCleanup();                         // once per file: no sidekiq outlives a test
 *   const sidekiq = await startSidekiq({ redis, queues: ["default", "critical"] });
 *   t.after(() => sidekiq.stop());
 *
 * The process loads test/ruby/jobs.rb, whose jobs RPUSH what they saw to the list `interop:ran`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, afterEach } from "node:test";
import { PROCESSES } from "../../src/wire/keys.js";
import type { RedisHandle } from "./redis.js";
import type { SidekiqRuby } from "./sidekiqRuby.js";

export interface SidekiqOptions {
  /** The test's private Redis (from `useRedis()`). */
  redis: RedisHandle;
  /** Queues in strict order, as `-q` flags (default: ["default"]). */
  queues?: string[];
  /** Worker threads, `-c` (default 5). */
  concurrency?: number;
  /** Seconds a TERM waits for running jobs before requeueing them, `-t` (default 8, under the 15 s kill). */
  shutdownTimeout?: number;
  /** Ruby file to `-r` (default: test/ruby/jobs.rb). */
  requireFile?: string;
  /** Milliseconds to wait for the process to register in `processes` (default 30 000). */
  readyTimeoutMs?: number;
  /** A Sidekiq 7.3 or 8.0 tree to run (default: Debian's `sidekiq` 6.4.1 on the PATH). */
  ruby?: SidekiqRuby;
  /** More environment for the process (REDIS_URL is always the test's). */
  env?: Record<string, string>;
}

export interface SidekiqProcess {
  readonly pid: number;
  /** The identity it registered in `processes`, e.g. `host:1234:1cbe2bedbcd7`. */
  readonly identity: string;
  /** The last lines of its stdout and stderr, for failure messages. */
  output(): string;
  /** TERM, then KILL if it has not exited within 15 s. Idempotent. */
  stop(): Promise<ExitStatus>;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when TERM was not enough and the process was killed with SIGKILL. */
  killed: boolean;
}

const OUTPUT_TAIL = 16 * 1024; // characters of log kept for failure messages
const KILL_AFTER_MS = 15_000;

/** Every sidekiq started by this file and not yet reaped. */
const running = new Set<ChildProcess>();

// Last resort if the test process dies without running its hooks: never leave Ruby behind.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** The repository root: the nearest directory above this file whose package.json is tsq's. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "tsq") {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no tsq package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function rubyTestFile(name: string): string {
  return join(repoRoot(), "test", "ruby", name);
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off("exit", onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once("exit", onExit);
  });
}

async function terminate(child: ChildProcess): Promise<ExitStatus> {
  let killed = false;
  if (!exited(child)) {
    child.kill("SIGTERM");
    if (!(await waitForExit(child, KILL_AFTER_MS))) {
      killed = true;
      child.kill("SIGKILL");
      await waitForExit(child, KILL_AFTER_MS);
    }
  }
  running.delete(child);
  return { code: child.exitCode, signal: child.signalCode, killed };
}

/** Stops every sidekiq this file started that is still running. Returns how many there were. */
export async function stopAllSidekiq(): Promise<number> {
  const left = [...running];
  await Promise.all(left.map((child) => terminate(child)));
  return left.length;
}

/**
 * Registers hooks so that no sidekiq outlives its test (afterEach) or the file (after, which fails
 * the run if one could not be reaped).
 */
export function useSidekiqCleanup(): void {
  afterEach(async () => {
    await stopAllSidekiq();
  });
  after(async () => {
    await stopAllSidekiq();
    const alive = [...running].filter((child) => !exited(child)).map((child) => child.pid);
    if (alive.length > 0) throw new Error(`sidekiq processes still running after the file: ${alive.join(", ")}`);
  });
}

/** Starts `sidekiq` and resolves once it has registered itself in `processes` (its first heartbeat). */
export async function startSidekiq(options: SidekiqOptions): Promise<SidekiqProcess> {
  // Without a URL, Ruby would fall back to 127.0.0.1:6379, which tests must never touch.
  if (!options.redis.url) throw new Error("startSidekiq: the private Redis is not up yet (call it inside a test)");
  const queues = options.queues ?? ["default"];
  const args = [
    "-r",
    options.requireFile ?? rubyTestFile("jobs.rb"),
    "-c",
    String(options.concurrency ?? 5),
    "-t",
    String(options.shutdownTimeout ?? 8),
    ...queues.flatMap((queue) => ["-q", queue]),
  ];
  // An empty working directory: with `-r <file>`, 6.4.1 reads ./config/sidekiq.yml if there is one.
  const cwd = mkdtempSync(join(tmpdir(), "tsq-sidekiq-"));
  const [command, commandArgs] = options.ruby
    ? ["ruby", [...options.ruby.flags, options.ruby.bin, ...args]]
    : ["sidekiq", args];
  const child = spawn(command, commandArgs, {
    cwd,
    env: { ...process.env, ...options.env, REDIS_URL: options.redis.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let log = "";
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  let spawnError: Error | undefined;
  child.once("error", (error) => (spawnError = error));
  child.once("exit", () => rmSync(cwd, { recursive: true, force: true }));

  const describe = () => `${command} ${commandArgs.join(" ")} (pid ${child.pid ?? "none"}); log tail:\n${log}`;
  let stopping: Promise<ExitStatus> | undefined;
  const stop = () => (stopping ??= terminate(child));

  try {
    const identity = await waitForRegistration(
      options.redis,
      child,
      options.readyTimeoutMs ?? 30_000,
      () => spawnError,
    );
    return { pid: child.pid!, identity, output: () => log, stop };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${describe()}`, { cause: error });
  }
}

/** Polls `processes` for the identity whose `info.pid` is the child's pid. */
async function waitForRegistration(
  redis: RedisHandle,
  child: ChildProcess,
  timeoutMs: number,
  spawnError: () => Error | undefined,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const error = spawnError();
    if (error)
      throw new Error(`could not run sidekiq (${error.message}); install it with apt-get install -y ruby-sidekiq`);
    if (exited(child)) throw new Error(`sidekiq exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    for (const identity of await redis.redis.smembers(PROCESSES)) {
      const info = await redis.redis.hget(identity, "info");
      if (info !== null && (JSON.parse(info) as { pid?: number }).pid === child.pid) return identity;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`sidekiq did not register in "processes" within ${timeoutMs} ms`);
}
