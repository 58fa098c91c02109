/**
 * Real `tsq-cluster` processes for the supervisor tests: started against a test file's private Redis with
 * a 1 s heartbeat and `--metrics-port 0`, observed from outside through Redis, the log stream,
 * `pgrep -P <supervisor>` and `kill -0`.
 */
import type { TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RedisHandle } from "./redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "./tsqProcess.js";
import { pushJobs, scratchDir } from "./fixtures.js";
import { giveUpAfter } from "./timing.js";

/** True while `pid` exists and is not a zombie (PID 1 here may not reap orphans promptly). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Every helper a supervisor test uses, bound to the test file's Redis. */
export function clusterKit(handle: RedisHandle) {
  /** A config file with a 1 s heartbeat, so the supervisor's readiness and hang checks are fast. */
  function fastConfig(extra = ""): string {
    const dir = scratchDir("tsq-cluster-cfg");
    const path = join(dir, "tsq.yml");
    writeFileSync(path, `heartbeat_interval: 1\n${extra}`);
    return path;
  }

  /** Starts `tsq-cluster <args> -C <fast config> --metrics-port 0`; stopped after the test. */
  function startCluster(t: TestContext, args: string[]): TsqProcess {
    const proc = startTsq(
      [...args, "-C", fastConfig(), "--metrics-port", "0"],
      { REDIS_URL: handle.url },
      "bin/tsq-cluster.js",
    );
    t.after(async () => {
      await proc.stop(15_000);
    });
    return proc;
  }

  /** Runs `tsq-cluster` to completion (for --dryrun / --list-queues). */
  function runCluster(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [join(ROOT, "bin/tsq-cluster.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL: handle.url },
      encoding: "utf8",
      timeout: giveUpAfter(30_000),
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  const push = (className: string, argsList: unknown[][], queue = "default") =>
    pushJobs(handle.url, className, argsList, queue);

  /** Live child pids of `ppid` (`pgrep -P`). */
  function childPids(ppid: number): number[] {
    const out = spawnSync("pgrep", ["-P", String(ppid)], { encoding: "utf8" }).stdout;
    return out
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map(Number)
      .filter(alive)
      .sort((a, b) => a - b);
  }

  /** `processes` as identity -> pid (from each process hash's `info`). */
  async function registered(): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    for (const identity of await handle.redis.smembers("processes")) {
      const info = await handle.redis.hget(identity, "info");
      result.set(identity, info ? (JSON.parse(info) as { pid: number }).pid : -1);
    }
    return result;
  }

  /** Waits until `processes` has exactly `n` identities, each with a live pid that is a child of `ppid`. */
  async function waitForChildren(
    ppid: number,
    n: number,
    ms = 30_000,
    proc?: TsqProcess,
  ): Promise<Map<string, number>> {
    return eventually(
      async () => {
        const procs = await registered();
        const kids = childPids(ppid);
        return procs.size === n && kids.length === n && [...procs.values()].every((pid) => kids.includes(pid))
          ? procs
          : undefined;
      },
      ms,
      `${n} children registered in "processes"${proc ? `; output:\n${proc.output().slice(-3000)}` : ""}`,
      50,
    );
  }

  /** `ruby -r sidekiq/api`: what Sidekiq's own API sees. */
  function rubyProcessSet(): { size: number; pids: number[]; identities: string[] } {
    const script =
      "require 'json'; ps = Sidekiq::ProcessSet.new; " +
      "puts JSON.generate({size: ps.size, pids: ps.map { |p| p['pid'] }, identities: ps.map { |p| p['identity'] }})";
    const result = spawnSync("ruby", ["-r", "sidekiq/api", "-e", script], {
      env: { ...process.env, REDIS_URL: handle.url },
      encoding: "utf8",
      timeout: giveUpAfter(30_000),
    });
    assert.equal(result.status, 0, `ruby failed: ${result.stderr}`);
    const last = result.stdout.trim().split("\n").at(-1)!;
    return JSON.parse(last) as { size: number; pids: number[]; identities: string[] };
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
  }

  function report(text: string): void {
    console.log(text);
  }

  return {
    fastConfig,
    startCluster,
    runCluster,
    alive,
    childPids,
    registered,
    waitForChildren,
    rubyProcessSet,
    sleep,
    report,
    push,
  };
}
