/**
 * The lock race: `processes` separate pushing processes (test/jobs/racePusher.ts), each with its own
 * Client and connection, released together, each firing `perProcess` concurrent pushes of the same job.
 * Used by the deduplication and unique-job race tests.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { RedisHandle } from "./redis.js";
import { ROOT } from "./tsqProcess.js";

const PUSHER = join(ROOT, "dist/test/jobs/racePusher.js");

export interface RaceOptions {
  /** File name in test/jobs holding the class, e.g. "dedupJobs.js". */
  module: string;
  className: string;
  processes: number;
  perProcess: number;
  /** Log lines whose `job_status` is this are counted (the refused pushes' log lines). */
  loggedStatus: string;
}

export interface RaceResult {
  /** What every push resolved to. */
  jids: (string | null)[];
  /** The jids in queue:default afterwards. */
  queued: string[];
  /** Log lines with `job_status` = loggedStatus, over all pushers. */
  logged: number;
}

interface Pusher {
  ready: Promise<void>;
  jids: Promise<(string | null)[]>;
  out(): string;
}

function startPusher(handle: RedisHandle, options: RaceOptions): Pusher {
  const child = spawn(process.execPath, [PUSHER, options.module, options.className, String(options.perProcess)], {
    env: { ...process.env, REDIS_URL: handle.url, TSQ_LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("ready\n")) markReady();
  });
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const jids = new Promise<(string | null)[]>((resolve, reject) => {
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("["));
      if (code !== 0 || line === undefined) reject(new Error(`pusher exited ${code}: ${err}${out.slice(-2000)}`));
      else resolve(JSON.parse(line) as (string | null)[]);
    });
  });
  return { ready, jids, out: () => out };
}

export async function race(handle: RedisHandle, options: RaceOptions): Promise<RaceResult> {
  const pushers = Array.from({ length: options.processes }, () => startPusher(handle, options));
  await Promise.all(pushers.map((p) => p.ready));
  // Every process is connected and blocked on `go`: release them together.
  await handle.redis.lpush("go", ...Array.from({ length: options.processes }, () => "1"));
  const jids = (await Promise.all(pushers.map((p) => p.jids))).flat();
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((t) => (JSON.parse(t) as { jid: string }).jid);
  const marker = `"job_status":"${options.loggedStatus}"`;
  const logged = pushers.reduce(
    (sum, p) =>
      sum +
      p
        .out()
        .split("\n")
        .filter((l) => l.includes(marker)).length,
    0,
  );
  return { jids, queued, logged };
}
