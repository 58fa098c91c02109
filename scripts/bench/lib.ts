// Shared plumbing for `npm run bench`: a private redis-server, a registry of every process the bench
// starts (so nothing outlives it, even on an error or Ctrl-C), /proc sampling (RSS, CPU) and small
// statistics helpers. Compiled with the rest of the project (dist/scripts/bench/lib.js).
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { DEFAULTS } from "../../src/platform/config/defaults.js";
import type { WorkerOptions } from "../../src/platform/config/options.js";

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Pushes the in-process benches keep in flight, as a busy app's requests would. */
export const IN_FLIGHT = 100;

/** Runs `push(0..n-1)` with `lanes` calls in flight at a time. */
export async function inFlight(n: number, push: (i: number) => Promise<unknown>, lanes = IN_FLIGHT): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) await push(next++);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/** The middle value (the upper middle for an even count). */
export const medianOf = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The message of whatever was thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

// ---------------------------------------------------------------------------------------------------
// Processes: every child is started in its own process group (detached), so one kill(-pgid) also
// reaches what it forked (tsq-cluster's children). `cleanupAll` is idempotent and is called from the
// normal path, from SIGINT/SIGTERM and, synchronously with SIGKILL, from process 'exit'.

/** How a tracked child ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child started by spawnTracked(): the last lines of its output, and a promise of its exit. */
export interface TrackedChild extends ChildProcess {
  output(): { lines: number; tail: string[] };
  exited: Promise<ExitStatus>;
}

export type SpawnTrackedOptions = SpawnOptions & { last?: boolean };

const live = new Map<number, { child: TrackedChild; name: string; last: boolean }>(); // pid -> { child, name }
const tempDirs = new Set<string>();

const beforeCleanup = new Set<() => unknown>();
/** `fn` runs (once) before a cleanup kills anything: e.g. closing the bench's own Redis connections. */
export function onCleanup(fn: () => unknown): void {
  beforeCleanup.add(fn);
}

const NEWLINE = 0x0a;
/** What a tracked child's output keeps: its last 30 lines, from at most its last 16 KB. */
const TAIL_LINES = 30;
const TAIL_BYTES = 16 * 1024;

/**
 * spawn() that registers the child for cleanup and keeps the last lines of its output. `last: true`
 * (redis-server) is stopped only after every other tracked process is gone.
 */
export function spawnTracked(
  name: string,
  command: string,
  args: readonly string[],
  options: SpawnTrackedOptions = {},
): TrackedChild {
  const { last = false, ...spawnOptions } = options;
  const spawned = spawn(command, args, {
    ...spawnOptions,
    detached: true,
    stdio: spawnOptions.stdio ?? ["ignore", "pipe", "pipe"],
  });
  // The reader shares the machine with the worker it measures, so it does as little per chunk as it
  // can: newlines counted natively and only the chunk's last bytes kept. Splitting every line of a
  // drain at the default log level (two lines per job) took as much CPU as a worker's own lines.
  let recent = Buffer.alloc(0);
  let lines = 0;
  const keep = (data: Buffer | string) => {
    const chunk = typeof data === "string" ? Buffer.from(`${data}\n`) : data;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) lines++;
    const joined = Buffer.concat([recent, chunk.subarray(Math.max(0, chunk.length - TAIL_BYTES))]);
    recent = joined.subarray(Math.max(0, joined.length - TAIL_BYTES));
  };
  const tail = () =>
    recent
      .toString()
      .split("\n")
      .filter((line) => line.trim() !== "")
      .slice(-TAIL_LINES)
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line));
  spawned.stdout?.on("data", keep);
  spawned.stderr?.on("data", keep);
  const child: TrackedChild = Object.assign(spawned, {
    output: () => ({ lines, tail: tail() }),
    exited: new Promise<ExitStatus>((resolve) => spawned.once("exit", (code, signal) => resolve({ code, signal }))),
  });
  child.once("error", (error) => keep(`${name}: ${error.message}`));
  const pid = child.pid;
  if (pid !== undefined) {
    live.set(pid, { child, name, last });
    child.once("exit", () => live.delete(pid));
  }
  return child;
}

/** A detached child leads its own process group (pgid = its pid), so this reaches it and what it forked. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return; // never started
  try {
    process.kill(-pid, signal);
  } catch {
    // the whole group is gone
  }
}

/** Ends one tracked child: `signal` to the process itself, then SIGKILL to its group after `graceMs`. */
export async function stopTracked(
  child: TrackedChild | undefined,
  { signal = "SIGTERM", graceMs = 10_000 }: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<ExitStatus | undefined> {
  if (!child || child.exitCode !== null || child.signalCode !== null) {
    if (child?.pid) killGroup(child.pid, "SIGKILL"); // stray grandchildren, if any
    return child?.exited;
  }
  try {
    if (child.pid !== undefined) process.kill(child.pid, signal);
  } catch {
    // gone meanwhile
  }
  const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), graceMs);
  const result = await child.exited;
  clearTimeout(timer);
  killGroup(child.pid, "SIGKILL"); // a group member that outlived its parent
  return result;
}

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/**
 * Every tracked process: SIGTERM, up to `graceMs`, then SIGKILL to its whole group; workers first,
 * redis-server last (a worker that loses Redis first only logs reconnect errors).
 */
export async function cleanupAll(graceMs = 3_000): Promise<void> {
  for (const fn of beforeCleanup) {
    beforeCleanup.delete(fn);
    try {
      await fn();
    } catch {
      // best effort
    }
  }
  for (const last of [false, true]) {
    const entries = [...live.values()].filter((entry) => entry.last === last);
    for (const { child } of entries) killGroup(child.pid, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (entries.some(({ child }) => child.pid !== undefined && live.has(child.pid)) && Date.now() < deadline)
      await sleep(50);
    for (const { child } of entries) killGroup(child.pid, "SIGKILL");
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Last resort (process 'exit' is synchronous): SIGKILL every group still registered. */
export function killAllNow(): void {
  for (const { child } of live.values()) killGroup(child.pid, "SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

let interrupted = false;
/** True once SIGINT/SIGTERM/SIGHUP arrived: errors after that are side effects of the cleanup. */
export const isInterrupted = (): boolean => interrupted;

export function installCleanupHandlers(log = (line: string): unknown => process.stderr.write(`${line}\n`)): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    log(`\nbench: ${signal}: stopping every worker and redis-server it started…`);
    void cleanupAll().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  process.on("exit", killAllNow);
}

// ---------------------------------------------------------------------------------------------------
// Redis

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close(() => reject(new Error(`a TCP listener has no port: ${address}`)));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}

/** A private redis-server on a free loopback port, no persistence. Resolves once it accepts connections. */
export interface PrivateRedis {
  url: string;
  port: number;
  child: TrackedChild;
  dir: string;
}

/** `extraArgs`: more redis-server flags, e.g. ["--enable-debug-command", "local"]. */
export async function startRedis(extraArgs: readonly string[] = []): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = makeTempDir("tsq-bench-redis-");
  const child = spawnTracked(
    "redis-server",
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extraArgs],
    { cwd: dir, last: true },
  );
  const { stdout, stderr } = child;
  if (!stdout || !stderr) throw new Error("redis-server: its output is not piped"); // spawnTracked pipes both
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
    const onData = (data: Buffer | string) => {
      output += data.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    stdout.on("data", onData);
    stderr.on("data", onData);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (${error.message}); install it, e.g. apt-get install -y redis-server`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output}`));
    });
  });
  stdout.removeAllListeners("data");
  stderr.removeAllListeners("data");
  stdout.resume();
  stderr.resume();
  return { url: `redis://127.0.0.1:${port}/0`, port, child, dir };
}

/** used_cpu_sys + used_cpu_user of the server, in seconds. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? NaN);
  return field("used_cpu_sys") + field("used_cpu_user");
}

/** Clients blocked in a blocking command (BRPOP, BLMOVE, BZPOPMIN…): a sign the workers are idle and fetching. */
export async function blockedClients(redis: Redis): Promise<number> {
  const info = await redis.info("clients");
  return Number(/^blocked_clients:(\d+)/m.exec(info)?.[1] ?? 0);
}

// ---------------------------------------------------------------------------------------------------
// /proc (Linux). Elsewhere the samplers return null and the report says "n/a".

const CLK_TCK = (() => {
  const out = spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim();
  return Number(out) || 100;
})();

/** Resident set size in KB, or null when the process is gone or /proc is missing. */
export function rssKb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds of one process, or null. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user+sys) of every process on the machine except `exclude` and kernel threads, by pid:
 * a snapshot to subtract from a later one, to see whether anything else ran during a measurement.
 * Per-process times rather than /proc/stat's machine total, which in a VM loses the ticks the host
 * took away (it reads less than the processes' own times add up to).
 */
export function otherProcessesCpu(exclude: Iterable<number>): Map<number, number> | null {
  const skip = new Set(exclude);
  const snapshot = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || skip.has(Number(entry))) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(fields[1]);
      if (ppid === 2 || entry === "2") continue; // kernel threads (softirq work of our own traffic, too)
      snapshot.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / CLK_TCK);
    } catch {
      // exited meanwhile
    }
  }
  return snapshot;
}

/** CPU seconds used between two otherProcessesCpu() snapshots (a process new in `after` counts whole). */
export function cpuBetween(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

/** Direct children of `pid` (every thread's), from /proc/<pid>/task/<tid>/children, else a /proc scan. */
export function childPids(pid: number): number[] {
  const found = new Set<number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      for (const child of text.split(/\s+/)) if (child) found.add(Number(child));
    }
    return [...found];
  } catch {
    // no children file: scan
  }
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid === pid) found.add(Number(entry));
      } catch {
        // exited meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return [...found];
}

// ---------------------------------------------------------------------------------------------------
// Numbers

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? NaN;
}

export function round(value: number | null | undefined, digits = 0): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const fmtInt = (n: number | null | undefined): string =>
  n === null || n === undefined || !Number.isFinite(n) ? "n/a" : Math.round(n).toLocaleString("en-US");
export const fmtMb = (kb: number | null | undefined): string =>
  kb === null || kb === undefined ? "n/a" : (kb / 1024).toFixed(0);

let markdownTables = false;
/** From now on, table() prints GitHub Markdown (for docs/performance.md). */
export function useMarkdownTables(): void {
  markdownTables = true;
}

export type Cell = string | number | null | undefined;

/** A plain text (or Markdown) table: first column left-aligned, the rest right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cells = rows.map((row) => row.map((cell) => String(cell ?? "")));
  if (markdownTables) {
    const md = (row: readonly string[]) => `| ${row.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
    return [md(header), `|${header.map((_, c) => (c === 0 ? ":---" : "---:")).join("|")}|`, ...cells.map(md)].join(
      "\n",
    );
  }
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => (row[c] ?? "").length)));
  const line = (row: readonly string[]) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...cells.map(line)].join("\n");
}

/** Options for an in-process worker on `url` (npm run bench:schedule, bench:heap): one capsule on `default`. */
export function inProcessWorkerOptions(url: string, concurrency: number): WorkerOptions {
  return {
    ...DEFAULTS,
    redisUrl: url,
    require: undefined,
    capsules: [{ name: "default", concurrency, queues: [{ name: "default", weight: 0 }] }],
    tag: "bench",
    labels: [],
    environment: "bench",
    verbose: false,
    fetch: "basic",
    metricsPort: undefined,
    metricsHost: "127.0.0.1",
    configFile: undefined,
    cron: [],
  };
}
