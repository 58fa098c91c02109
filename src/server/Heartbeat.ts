/**
 * Heartbeat: every `heartbeatInterval` seconds (Sidekiq 7+: 10), one MULTI that tells Redis this
 * process is alive and what it is doing, exactly as Sidekiq's `Launcher#❤`:
 *
 *   SADD processes <id>
 *   HSET <id> info <json> concurrency <n> busy <n> beat <float s> rtt_us <µs> quiet "true"|"false" rss <KB>
 *        abandoned <n>   (tsq's own: jobs given up on that still run; Sidekiq ignores the field)
 *   EXPIRE <id> 60
 *   UNLINK <id>:work <id>:workers ; HSET them <tid> {"queue","payload":<job JSON>,"run_at":<int s>} ; EXPIRE 60
 *   INCRBY stat:processed|failed[:<UTC date>] <n> ; EXPIRE <daily key> <5 years>
 *   RPOP <id>-signals            -> TSTP / TERM / TTIN, acted on like the real signal
 *
 * then, with `sidekiq_version: auto`, the Sidekiq versions of the processes in `processes` (SMEMBERS, and
 * HGET info of any identity not seen before: src/platform/FleetVersion.ts), which decide the formats
 * written from this beat on, logged at the first beat and whenever they change; then, in a pipeline of
 * its own, the per-class execution metrics counted since the last beat (src/server/ExecutionTracker.ts)
 * in the layout just decided.
 *
 * `<id>:workers` is the 6.4.1 name of the work hash; writing both keeps 6.4.1 and newer UIs right.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import {
  PROCESSES,
  STAT_FAILED,
  STAT_PROCESSED,
  dailyStatKey,
  legacyWorkKey,
  processKey,
  signalsKey,
  workKey,
} from "../wire/keys.js";
import { ProblemLog } from "../platform/redis/errors.js";
import { describeDecision } from "../platform/FleetVersion.js";
import { sleep } from "../platform/util/sleep.js";
import { formatSeconds, nowSeconds } from "../wire/timestamps.js";
import type { ServerContext } from "./context.js";
import type { WorkEntry } from "./ProcessState.js";

/** Daily stat keys live 5 years (Sidekiq STATS_TTL), in seconds. */
const STATS_TTL = 5 * 365 * 24 * 60 * 60;

export type RemoteSignal = "TSTP" | "TERM" | "TTIN";

/** Resident set size in KB, from /proc like Sidekiq on Linux; process.memoryUsage elsewhere. */
export function rssKb(): number {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (match) return Number(match[1]);
  } catch {
    // Not Linux: fall through.
  }
  return Math.round(process.memoryUsage.rss() / 1024);
}

/** A work hash entry, as Sidekiq writes it (`queue`, `payload`, `run_at`), plus tsq's `progress` when reported. */
export function workJson(entry: WorkEntry): string {
  const record: Record<string, unknown> = { queue: entry.queue, payload: entry.payload, run_at: entry.runAt };
  if (entry.progress !== undefined) record.progress = entry.progress;
  return JSON.stringify(record);
}

export interface HeartbeatSource {
  /** The `info` JSON (static for the process's life). */
  info: Record<string, unknown>;
  concurrency: number;
  isQuiet(): boolean;
  onSignal(signal: RemoteSignal): void;
}

export class Heartbeat {
  private readonly stopController = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly infoJson: string;
  private readonly problems: ProblemLog;
  private readonly metricProblems: ProblemLog;
  private readonly fleetProblems: ProblemLog;

  constructor(
    private readonly ctx: ServerContext,
    private readonly source: HeartbeatSource,
  ) {
    this.infoJson = JSON.stringify(source.info);
    this.problems = new ProblemLog("heartbeat", ctx.logger);
    this.metricProblems = new ProblemLog("writing execution metrics", ctx.logger);
    this.fleetProblems = new ProblemLog("reading the Sidekiq versions in processes", ctx.logger);
  }

  /** Beats once now (so the process shows up before start resolves), then every interval. */
  async start(): Promise<void> {
    if (this.loop) return;
    this.loop = Promise.resolve();
    await this.beat();
    this.loop = this.run();
  }

  /** Stops beating, flushes stats and removes this process from `processes` (the hash expires). */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
    const { redis, identity } = this.ctx;
    const multi = redis.multi();
    this.addStats(multi, this.ctx.state.takeCounts());
    multi.srem(PROCESSES, identity).unlink(workKey(identity), legacyWorkKey(identity));
    await multi.exec();
    await this.flushMetrics();
  }

  /** One heartbeat; exported for tests and for a beat right after quiet. */
  async beat(): Promise<void> {
    const { redis, identity, state, options } = this.ctx;
    const counts = state.takeCounts();
    let beaten = false;
    try {
      const pingStart = performance.now();
      await redis.ping();
      const rttUs = Math.round((performance.now() - pingStart) * 1000);
      const ttl = options.heartbeatTtl;
      const multi = redis.multi().sadd(PROCESSES, identity);
      multi.hset(processKey(identity), {
        info: this.infoJson,
        concurrency: String(this.source.concurrency),
        busy: String(state.busy),
        beat: formatSeconds(nowSeconds()),
        rtt_us: String(rttUs),
        quiet: String(this.source.isQuiet()),
        rss: String(rssKb()),
        abandoned: String(state.abandoned),
      });
      multi.expire(processKey(identity), ttl);
      multi.unlink(workKey(identity), legacyWorkKey(identity));
      if (state.busy > 0) {
        const work: Record<string, string> = {};
        for (const [tid, entry] of state.work) {
          work[tid] = workJson(entry);
        }
        multi.hset(workKey(identity), work).expire(workKey(identity), ttl);
        multi.hset(legacyWorkKey(identity), work).expire(legacyWorkKey(identity), ttl);
      }
      this.addStats(multi, counts);
      multi.rpop(signalsKey(identity));
      const results = (await multi.exec()) ?? [];
      for (const [error] of results) if (error) throw error;
      const signal = results.at(-1)?.[1];
      this.problems.succeeded();
      beaten = true;
      if (typeof signal === "string") this.dispatch(signal);
    } catch (error) {
      state.restoreCounts(counts);
      this.problems.failed(
        error,
        "this process's record and stats were not written (they are kept and written at the first beat that works); retrying every beat",
      );
    }
    // With Redis away the read would only fail too: the formats stay until a beat works.
    if (beaten) await this.readFleet();
    await this.flushMetrics();
  }

  /** The formats to write from now on (`sidekiq_version`), logged the first time and when they change. */
  private async readFleet(): Promise<void> {
    const { client, redis, logger } = this.ctx;
    try {
      const decision = await client.fleetVersion.read(redis);
      this.fleetProblems.succeeded();
      if (!decision.changed) return;
      const { fields, message } = describeDecision(client.fleetVersion.setting, decision);
      logger.info(fields, message);
    } catch (error) {
      this.fleetProblems.failed(error, "the formats written stay as they were; retrying every beat");
    }
  }

  /** The per-class metrics (`j|…`, `h|…`), flushed with the beat as Sidekiq does on `:beat`. */
  private async flushMetrics(): Promise<void> {
    const execution = this.ctx.execution;
    if (!execution || execution.pending === 0) return;
    try {
      await execution.flush(this.ctx.redis, this.ctx.client.fleetVersion.formats.metrics);
      this.metricProblems.succeeded();
    } catch (error) {
      this.metricProblems.failed(error, "the per-class metrics of the last beat are lost (as in Sidekiq)");
    }
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    for (;;) {
      await sleep(this.ctx.options.heartbeatInterval * 1000, signal);
      if (signal.aborted) return;
      await this.beat();
    }
  }

  private addStats(
    multi: ReturnType<ServerContext["redis"]["multi"]>,
    counts: { processed: number; failed: number },
  ): void {
    const today = new Date();
    for (const [key, n] of [
      [STAT_PROCESSED, counts.processed],
      [STAT_FAILED, counts.failed],
    ] as const) {
      if (n === 0) continue;
      const daily = dailyStatKey(key, today);
      multi.incrby(key, n).incrby(daily, n).expire(daily, STATS_TTL);
    }
  }

  private dispatch(signal: string): void {
    if (signal === "TSTP" || signal === "TERM" || signal === "TTIN") {
      this.ctx.logger.info({ signal }, "received remote signal");
      this.source.onSignal(signal);
    } else {
      this.ctx.logger.warn({ signal }, "ignoring unknown remote signal");
    }
  }
}
