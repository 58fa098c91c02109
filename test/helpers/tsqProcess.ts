/**
 * Runs a real `tsq` worker process (bin/tsq.js) for tests, captures its log lines, and makes sure it is
 * gone after the test file.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after } from "node:test";
import { giveUpAfter } from "./timing.js";

/** The repository root (the directory holding package.json). */
export const ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return dir;
})();

export const TEST_JOBS = join(ROOT, "dist/test/jobs/testJobs.js");

export interface TsqProcess {
  child: ChildProcess;
  /** Parsed JSON log lines so far. */
  lines: Record<string, unknown>[];
  /** Raw output (stdout + stderr), for failure messages. */
  output(): string;
  /** Resolves with the first log line matching `predicate` (rejects after giveUpAfter(`ms`), test/helpers/timing.ts). */
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  signal(signal: NodeJS.Signals): void;
  /** TERM, then KILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<number | string>;
}

const running = new Set<TsqProcess>();
after(async () => {
  await Promise.all([...running].map((p) => p.stop(5000)));
});

/**
 * Tests never touch the machine's Redis on 6379: a process started without a Redis URL of its own gets
 * one where nothing listens (port 1), so a forgotten URL fails loudly instead of reaching the default.
 */
const NO_REDIS = "redis://127.0.0.1:1/0";

function guardedEnv(args: readonly string[], env: Record<string, string>): NodeJS.ProcessEnv {
  // An empty REDIS_URL (a private server not started yet) would mean the default, 127.0.0.1:6379.
  if ("REDIS_URL" in env && !env.REDIS_URL) throw new Error("REDIS_URL is empty: start the private Redis first");
  const urls = [env.REDIS_URL ?? "", ...args].filter((a) => /redis(\+sentinel)?s?:\/\//.test(a));
  const bad = urls.find((u) => /:6379(\/|$|\?)/.test(u) || /:\/\/[^/:]*(\/|$)/.test(u));
  if (bad !== undefined) throw new Error(`a test must use its private Redis, not ${bad.replace(/:[^@/]*@/, ":***@")}`);
  return { ...process.env, REDIS_URL: NO_REDIS, ...env };
}

export function startTsq(args: string[], env: Record<string, string>, bin = "bin/tsq.js"): TsqProcess {
  const child = spawn(process.execPath, [join(ROOT, bin), ...args], {
    cwd: ROOT,
    env: guardedEnv(args, env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let raw = "";
  let pending = "";
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    predicate: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  const onData = (data: Buffer) => {
    const text = data.toString();
    raw = (raw + text).slice(-200_000);
    pending += text;
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    for (const part of parts) {
      if (!part.startsWith("{")) continue;
      try {
        const line = JSON.parse(part) as Record<string, unknown>;
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.predicate(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      } catch {
        // Not a log line.
      }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise<number | string>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? signal ?? -1));
  });
  const proc: TsqProcess = {
    child,
    lines,
    output: () => raw,
    exited,
    waitForLine(predicate, ms = 20_000) {
      const found = lines.find(predicate);
      if (found) return Promise.resolve(found);
      const limit = giveUpAfter(ms);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching log line within ${limit} ms; output:\n${raw.slice(-3000)}`)),
          limit,
        );
        waiters.push({
          predicate,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  running.add(proc);
  void exited.then(() => running.delete(proc));
  return proc;
}

/** Waits until `check` resolves truthy, polling every `intervalMs`; rejects with `message` after giveUpAfter(`ms`) (test/helpers/timing.ts). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  ms: number,
  message: string,
  intervalMs = 100,
): Promise<T> {
  const limit = giveUpAfter(ms);
  const deadline = Date.now() + limit;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${limit} ms: ${message}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `work`'s value, or `fallback` if it takes longer than `ms`. The timer is cleared either way, so a
 * finished wait leaves nothing that keeps the test file's process alive.
 */
export async function within<T, F>(work: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
