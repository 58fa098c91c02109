/**
 * Logging: one pino logger per process. JSON lines on stdout, or human-readable lines when stdout is a
 * terminal (`TSQ_LOG_FORMAT=json|pretty` overrides). Lines logged while a job runs carry the job's
 * context (jid, class, queue) without the job passing a logger around, via AsyncLocalStorage.
 *
 * Every line passes through `redactText` on its way out and errors are serialized by `safeError`, so
 * no password reaches the log whatever is logged (see secrets.ts).
 *
 * An application hands tsq its own pino (or pino-compatible) logger with `configureLogger({ logger })`:
 * tsq then logs through a child of it (its level, its destination, its redaction rules), errors still
 * serialized by `safeError` and lines inside a job still carrying the job's context.
 *
 * `logger` is both the function that returns the process logger (`logger().info(...)`) and an object
 * with pino's methods (`logger.info(...)`), which is what most people type first.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger, type LevelWithSilent, type LogFn } from "pino";
import type { PinoPretty } from "pino-pretty";
import { redactText, safeError } from "./secrets.js";

export type { Logger } from "pino";

export interface JobLogContext {
  jid: string;
  class: string;
  queue: string;
  [field: string]: unknown;
}

/**
 * What a running job carries through its async calls: its log fields, and the client its own pushes go
 * through (set by the worker, read by defaultClient). One store for both: every AsyncLocalStorage in use
 * costs each promise a job creates a hook call.
 */
export interface JobScope {
  readonly log: JobLogContext;
  readonly client?: unknown;
}

const jobScope = new AsyncLocalStorage<JobScope>();

/** Pretty when stdout is a terminal, unless TSQ_LOG_FORMAT says otherwise. */
function wantsPretty(): boolean {
  const format = process.env.TSQ_LOG_FORMAT;
  if (format === "json") return false;
  if (format === "pretty") return true;
  return process.stdout.isTTY === true;
}

function prettyStream(): DestinationStream {
  // Loaded only for a terminal: a worker logging JSON (every cluster child, every tsqctl in a pipe)
  // does not pay its ~50 ms of CPU at start.
  const pretty = (createRequire(import.meta.url)("pino-pretty") as { PinoPretty: typeof PinoPretty }).PinoPretty;
  // Synchronous, on this thread: a worker-thread transport could lose the last lines of a crash.
  // One line per event: a job's fields follow its message on the same line.
  return pretty({
    colorize: true,
    sync: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "hostname,pid",
  });
}

function build(level: LevelWithSilent, base: Record<string, unknown>, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid, ...base },
    // A copy: pino's default merge writes the line's own fields into the object the mixin returns.
    mixin: () => {
      const context = jobScope.getStore()?.log;
      return context ? { ...context } : {};
    },
    serializers: { err: safeError, error: safeError },
    hooks: { streamWrite: redactText },
  };
  const target = destination ?? (wantsPretty() ? prettyStream() : undefined);
  return target ? pino(options, target) : pino(options);
}

// The process logger: the one process-wide setting, as a process has one stdout. Workers embedded in
// an app take their own logger through their settings instead (Worker's `logger`).
let root = build((process.env.TSQ_LOG_LEVEL as LevelWithSilent | undefined) ?? "info", {});
/** True when `root` is a child of the application's logger, which has no tsq mixin for job context. */
let adopted = false;

function current(): Logger {
  if (!adopted) return root;
  const context = jobScope.getStore()?.log;
  return context ? root.child({ ...context }) : root;
}

type LogMethods = Pick<Logger, "trace" | "debug" | "info" | "warn" | "error" | "fatal">;

function method(level: keyof LogMethods): LogFn {
  const call = (...args: Parameters<LogFn>): void => current()[level](...args);
  return call;
}

/**
 * The process logger (`logger().info(...)`), also usable as one (`logger.info(...)`). Inside a job,
 * every line includes the job's jid, class and queue.
 */
export const logger: (() => Logger) & LogMethods = Object.assign(current, {
  trace: method("trace"),
  debug: method("debug"),
  info: method("info"),
  warn: method("warn"),
  error: method("error"),
  fatal: method("fatal"),
});

/**
 * Rebuilds the process logger, e.g. `-v` (debug) or a cluster child's `{ child, group }` tags. The level
 * defaults to the current one, which starts as TSQ_LOG_LEVEL (default "info").
 */
export function configureLogger(options: {
  level?: LevelWithSilent;
  base?: Record<string, unknown>;
  destination?: DestinationStream;
  /** The application's own pino (or pino-compatible) logger: tsq logs through a child of it. */
  logger?: Logger;
}): Logger {
  if (options.logger) {
    root = options.logger.child(options.base ?? {}, { serializers: { err: safeError, error: safeError } });
    if (options.level) root.level = options.level;
    adopted = true;
    return root;
  }
  root = build(options.level ?? (root.level as LevelWithSilent), options.base ?? {}, options.destination);
  adopted = false;
  return root;
}

/** The context of the job being performed here, if any. */
export function currentJobContext(): JobLogContext | undefined {
  return jobScope.getStore()?.log;
}

/** The scope of the job being performed here, if any. */
export function currentJobScope(): JobScope | undefined {
  return jobScope.getStore();
}

/** Runs `fn` with `context` attached to every line logged inside it. */
export function withJobContext<T>(context: JobLogContext, fn: () => T): T {
  return jobScope.run({ log: context }, fn);
}

/** Runs `fn` as a job: its log context, and what else the job carries (see JobScope). */
export function withJobScope<T>(scope: JobScope, fn: () => T): T {
  return jobScope.run(scope, fn);
}
