/**
 * HealthWatch: the supervisor's periodic look at each ready child.
 *
 * - Hang: the child's `beat` in Redis is older than the hang threshold while its process is alive. A
 *   CPU-bound job blocks the event loop, so nothing inside the child can notice; the supervisor kills
 *   it (SIGKILL) and logs the jobs its last heartbeat said it was running.
 * - Memory: the child's RSS (from /proc) is over `--max-memory`: it is stopped gracefully and replaced.
 * - Abandoned jobs: its heartbeat says at least `--max-abandoned` jobs it gave up on (timed out or
 *   cancelled, ignoring their abort signal) still run: stopped gracefully and replaced, as for memory,
 *   since only a new process ends promises nobody awaits.
 */
import { readFileSync } from "node:fs";
import { workKey, processKey } from "../wire/keys.js";
import { toEpochSeconds, nowSeconds } from "../wire/timestamps.js";
import { childRedis, type Child, type Fleet, type SupervisorOptions } from "./fleet.js";
import { batchJobs } from "../server/ProcessState.js";

/** RSS of another process in bytes (Linux /proc), or undefined if it cannot be read. */
export function processRssBytes(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class HealthWatch {
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly supervisor: Fleet,
    private readonly options: SupervisorOptions,
  ) {}

  /** Checks every few seconds: a quarter of the hang threshold, between 1 and 5 s. */
  start(): void {
    const every = Math.min(Math.max(this.options.hangThreshold / 4, 1), 5) * 1000;
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const child of this.supervisor.readyChildren()) {
        if (this.supervisor.isStopping) return;
        if (this.overMemory(child)) continue;
        await this.checkHang(child);
      }
    } catch (error) {
      this.options.logger.error({ err: error }, "health check failed");
    } finally {
      this.checking = false;
    }
  }

  private overMemory(child: Child): boolean {
    const limit = this.options.maxMemoryMb;
    const pid = child.worker.process.pid;
    if (limit === undefined || pid === undefined) return false;
    const rss = processRssBytes(pid);
    if (rss === undefined || rss <= limit * 1024 * 1024) return false;
    this.options.logger.warn(
      { child: child.slot.plan.index, pid, rss_mb: Math.round(rss / 1024 / 1024), limit_mb: limit },
      "child over --max-memory; stopping it gracefully and starting a replacement",
    );
    this.supervisor.retire(child, "memory");
    return true;
  }

  private async checkHang(child: Child): Promise<void> {
    if (!child.identity) return;
    const { hangThreshold, logger } = this.options;
    const redis = childRedis(this.options, child.slot.plan);
    const [beatField, abandonedField] = await redis.hmget(processKey(child.identity), "beat", "abandoned");
    const beat = toEpochSeconds(beatField);
    // No record at all means it expired (60 s) while the process stayed alive: hung as well.
    const age = beat === undefined ? (performance.now() - (child.readyAt ?? 0)) / 1000 : nowSeconds() - beat;
    if (age <= hangThreshold) return this.checkAbandoned(child, Number(abandonedField ?? 0));
    const work = await redis.hgetall(workKey(child.identity));
    const jobs: (
      | { jid?: string | undefined; class?: string | undefined; queue?: string | undefined; run_at?: number }
      | { raw: string }
    )[] = Object.values(work).map((value) => {
      try {
        const entry = JSON.parse(value) as { queue: string; payload: string; run_at: number };
        const job = JSON.parse(entry.payload) as { jid?: string; class?: string; wrapped?: string };
        return { jid: job.jid, class: job.wrapped ?? job.class, queue: entry.queue, run_at: entry.run_at };
      } catch {
        return { raw: value.slice(0, 200) };
      }
    });
    // The heartbeat's work hash misses a job that blocked the event loop right after it started; the
    // child reported its batch over IPC before it blocked.
    for (const job of batchJobs(this.supervisor.lastBatchOf(child))) {
      if (!jobs.some((j) => "jid" in j && j.jid === job.jid))
        jobs.push({ jid: job.jid, class: job.class, queue: job.queue });
    }
    logger.error(
      {
        child: child.slot.plan.index,
        pid: child.worker.process.pid,
        identity: child.identity,
        heartbeat_age_s: Math.round(age),
        jobs,
      },
      `child hung (no heartbeat for ${Math.round(age)} s) while running ${jobs.map((j) => ("class" in j ? `${j.class} ${j.jid}` : "?")).join(", ") || "no job"}; killing and replacing it`,
    );
    this.supervisor.retire(child, "hang");
  }

  private checkAbandoned(child: Child, abandoned: number): void {
    const limit = this.options.maxAbandoned;
    if (limit === 0 || !(abandoned >= limit)) return;
    this.options.logger.warn(
      { child: child.slot.plan.index, pid: child.worker.process.pid, abandoned, limit },
      `child has ${abandoned} abandoned jobs still running (--max-abandoned ${limit}); stopping it gracefully and starting a replacement`,
    );
    this.supervisor.retire(child, "abandoned");
  }
}
