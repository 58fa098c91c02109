/**
 * `tsqctl top`: a live view like `sidekiqmon`, redrawn every 2 s: processed/failed with their rates,
 * processes with busy/concurrency, queues with size and latency. `q` or Ctrl-C quits.
 *
 * On a terminal it draws on the alternate screen (the shell's screen comes back on exit) and reads
 * keys in raw mode; otherwise, or with --once, it prints frames as plain text.
 */
import { performance } from "node:perf_hooks";
import type { Command } from "commander";
import type { Redis } from "ioredis";
import { ProcessSet, Queue, Stats } from "../api/index.js";
import { redactUrl } from "../../platform/redis/connection.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { sleep } from "../../platform/util/sleep.js";
import { addRedisUrlOption, resolveRedisUrl, UsageError, withRedis, type CliIO } from "./common.js";
import { utcTime, visible } from "./format.js";
import { queueSummaries } from "./stats.js";
import { RateMeter, renderTop, type Screen, type TopData } from "./topScreen.js";

interface TopFlags {
  interval: number;
  once?: boolean;
  redisUrl?: string;
}

const ALT_SCREEN_ON = "\x1b[?1049h\x1b[?25l"; // alternate screen, cursor hidden
const ALT_SCREEN_OFF = "\x1b[?25h\x1b[?1049l";
/** Milliseconds a refresh may take before the frame says Redis is not answering. */
const SLOW_REFRESH_MS = 5000;
/** Screen size used when output is not a terminal. */
const PLAIN_SCREEN: Screen = { columns: 200, rows: 1000 };

async function collect(redis: Redis): Promise<TopData> {
  const [stats, processes, queues] = await Promise.all([
    new Stats(redis).fetch(),
    new ProcessSet(redis).list(),
    Queue.all(redis).then(queueSummaries),
  ]);
  return { stats, processes, queues, now: nowSeconds() };
}

/** Resolves to the value, or to null when `ms` pass or `signal` aborts first. */
function within<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T | null> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener("abort", abort, { once: true });
  return Promise.race([work, sleep(ms, controller.signal).then(() => null)]).finally(() => {
    controller.abort();
    signal.removeEventListener("abort", abort);
  });
}

function parseInterval(text: string): number {
  const seconds = Number(text);
  if (text.trim() === "" || !Number.isFinite(seconds) || seconds < 0.5)
    throw new UsageError("--interval must be a number of seconds, at least 0.5");
  return seconds;
}

async function run(redis: Redis, url: string, flags: TopFlags, io: CliIO): Promise<void> {
  const terminal = flags.once ? undefined : io.terminal;
  const stop = new AbortController();
  const quitKeys = (data: Buffer) => {
    // q, Q, Ctrl-C (raw mode turns it into a byte instead of SIGINT), Ctrl-D.
    // eslint-disable-next-line no-control-regex -- Ctrl-C and Ctrl-D arrive as control bytes
    if (/[qQ\x03\x04]/.test(data.toString("latin1"))) stop.abort();
  };
  const onSignal = () => stop.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  if (terminal) {
    terminal.input.setRawMode(true);
    terminal.input.on("data", quitKeys);
    terminal.input.resume();
    io.out(ALT_SCREEN_ON);
  }
  const meter = new RateMeter();
  let last: TopData | undefined;
  let rates = { processed: null as number | null, failed: null as number | null };
  try {
    while (!stop.signal.aborted) {
      const header = `tsqctl top   ${redactUrl(url)}   ${utcTime(nowSeconds())}   every ${flags.interval} s   q or Ctrl-C quits`;
      let warning: string | undefined;
      try {
        const data = await within(collect(redis), SLOW_REFRESH_MS, stop.signal);
        if (stop.signal.aborted) break;
        if (data === null) warning = `! Redis has not answered for ${SLOW_REFRESH_MS / 1000} s; showing the last data`;
        else {
          last = data;
          rates = meter.add(performance.now() / 1000, data.stats.processed, data.stats.failed);
        }
      } catch (error) {
        warning = `! ${(error as Error).message}`;
      }
      const screen = terminal
        ? { columns: terminal.output.columns || 80, rows: terminal.output.rows || 24 }
        : PLAIN_SCREEN;
      const lines = last
        ? renderTop(last, rates, screen, header, warning)
        : [header, warning ?? "loading…"].map(visible);
      if (terminal) io.out(`\x1b[H${lines.map((line) => `${line}\x1b[K`).join("\r\n")}\x1b[J`);
      else io.out(`${lines.join("\n")}\n\n`);
      if (flags.once) break;
      await sleep(flags.interval * 1000, stop.signal);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (terminal) {
      terminal.input.off("data", quitKeys);
      terminal.input.setRawMode(false);
      terminal.input.pause();
      io.out(ALT_SCREEN_OFF);
    }
  }
  // A refresh still waiting for an unreachable Redis must not hold the exit.
  if (stop.signal.aborted) redis.disconnect();
}

export function registerTop(program: Command, io: CliIO): void {
  const command = program
    .command("top")
    .description("live view of processes, queues and throughput, like sidekiqmon (q or Ctrl-C quits)")
    .option("--interval <seconds>", "seconds between refreshes (default 2)", parseInterval, 2)
    .option("--once", "print one frame as plain text and exit");
  addRedisUrlOption(command).action(async (flags: TopFlags) => {
    const url = resolveRedisUrl(flags.redisUrl, io);
    await withRedis(url, (redis) => run(redis, url, flags, io));
  });
}
