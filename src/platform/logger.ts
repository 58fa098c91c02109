/**
 * Logging: one pino logger per process. JSON lines on stdout, or human-readable lines when stdout is a
 * terminal (`TSQ_LOG_FORMAT=json|pretty` overrides). Lines logged while a job runs carry the job's
 * context (jid, class, queue) without the job passing a logger around, via AsyncLocalStorage.
 *
 * Every line passes through `redactText` on its way out and errors are serialized by `safeError`, so
 * no password reaches the log whatever is logged (see secrets.ts).
 *
 * An application hands tsq its own pino (or pino-compatible) logger with `configureLogger({ logger })`
 * or `new Worker({ logger })`: tsq then logs through a child of it (its level, its destination, its
 * redaction rules), errors still serialized by `safeError`. Such a logger has no tsq mixin, so
 * `withJobFields` gives it the job's fields: inside a job, its lines go through a child of it bound to
 * the job's context (one child per job and logger, made at the job's first line).
 *
 * `logger` is both the function that returns the process logger (`logger().info(...)`) and an object
 * with pino's methods (`logger.info(...)`), which is what most people type first.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import {
  pino,
  type ChildLoggerOptions,
  type DestinationStream,
  type Logger,
  type LevelWithSilent,
  type LogFn,
} from "pino";
import type { PinoPretty } from "pino-pretty";
import { redactText, safeError } from "./secrets.js";
import { FdLines, LineBatch } from "./logLines.js";

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
  /** The running worker's logger: `logger()` inside the job logs through it (with the job's fields). */
  readonly logger?: Logger;
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

/** What the mixin returns when a line gets no job fields: merged as nothing (mergeJobFields). */
const NO_FIELDS: Record<string, unknown> = Object.freeze({});

/** The fields of the job running here, on every line of a logger tsq built. */
function jobFields(): Record<string, unknown> {
  const scope = jobScope.getStore();
  if (scope === undefined) return NO_FIELDS;
  // A copy: the merge below writes the line's own fields into the object the mixin returns.
  return { ...scope.log };
}

/** pino's default merge (the line's fields over the mixin's), without a copy when there is nothing to add. */
function mergeJobFields(line: object, fields: object): object {
  return fields === NO_FIELDS ? line : Object.assign(fields, line);
}

function build(level: LevelWithSilent, base: Record<string, unknown>, destination?: DestinationStream): Logger {
  const target = destination ?? (wantsPretty() ? prettyStream() : jsonStream());
  const options = {
    level,
    base: { pid: process.pid, ...base },
    mixin: jobFields,
    mixinMergeStrategy: mergeJobFields,
    serializers: { err: safeError, error: safeError },
    // A LineBatch redacts its batches itself.
    hooks: target instanceof LineBatch ? {} : { streamWrite: redactText },
  };
  return target ? pino(options, target) : pino(options);
}

/**
 * JSON on stdout, a turn's lines in one synchronous write to fd 1 (logLines.ts). When something replaced process.stdout.write (a test runner capturing
 * output), pino's default instead: through it, line by line.
 */
function jsonStream(): DestinationStream | undefined {
  const stdout = process.stdout as NodeJS.WriteStream & { constructor: { prototype: { write: unknown } } };
  if (stdout.write !== stdout.constructor.prototype.write) return undefined;
  return new LineBatch(new FdLines(1));
}

/** True for a logger tsq built here (or a child of one): its lines get the running job's fields. */
export function builtByTsq(logger: Logger): boolean {
  return (logger as unknown as Record<symbol, unknown>)[pino.symbols.mixinSym] === jobFields;
}

type LogMethods = Pick<Logger, "trace" | "debug" | "info" | "warn" | "error" | "fatal">;

/** What a logger made job-aware resolves per call: its log methods, and `child` (a child of the job's). */
const PER_JOB = new Set<string | symbol>(["trace", "debug", "info", "warn", "error", "fatal", "child"]);

/** Loggers `withJobFields` made: wrapping one again would only add a lookup. */
const jobAware = new WeakSet<Logger>();

/** True for a logger whose lines already carry the job's fields: tsq built it (or a child of it). */
function carriesJobFields(logger: Logger): boolean {
  return builtByTsq(logger) || jobAware.has(logger);
}

/**
 * `base`, with the running job's fields (jid, class, queue, correlation_id) on every line logged inside
 * a job. A logger tsq built has them already (its mixin); an app's logger gets, inside each job, a child
 * bound to them, made at the job's first line and kept for the job (keyed by its scope, so it goes with it).
 */
export function withJobFields(base: Logger): Logger {
  if (carriesJobFields(base)) return base;
  const children = new WeakMap<JobScope, Logger>();
  const forJob = (): Logger => {
    const scope = jobScope.getStore();
    if (!scope) return base;
    let child = children.get(scope);
    if (!child) children.set(scope, (child = base.child({ ...scope.log })));
    return child;
  };
  const aware = new Proxy(base, {
    get(target, property) {
      if (!PER_JOB.has(property)) return Reflect.get(target, property, target) as unknown;
      const logger = forJob();
      // A child made outside a job (a role's own tags) must add the fields of the jobs it later logs in.
      if (property === "child" && logger === base)
        return (bindings: Record<string, unknown>, options?: ChildLoggerOptions) =>
          withJobFields(base.child(bindings, options));
      const value = Reflect.get(logger, property, logger) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(logger) : value;
    },
  });
  jobAware.add(aware);
  return aware;
}

/** The app's logger as tsq logs through it: a child with tsq's error serializers, job fields added. */
export function adoptLogger(logger: Logger): Logger {
  if (carriesJobFields(logger)) return logger;
  return withJobFields(logger.child({}, { serializers: { err: safeError, error: safeError } }));
}

// The process logger: the one process-wide setting, as a process has one stdout. Workers embedded in
// an app take their own logger through their settings instead (Worker's `logger`). Built at its first
// line, not at import: the stdout batch it writes through hooks the process's exit.
let root: Logger | undefined;

/** The level of the process logger until one is configured: TSQ_LOG_LEVEL, default "info". */
function initialLevel(): LevelWithSilent {
  return (process.env.TSQ_LOG_LEVEL as LevelWithSilent | undefined) ?? "info";
}

function processLogger(): Logger {
  root ??= build(initialLevel(), {});
  return root;
}

/** Inside a job, its worker's logger (which adds the job's fields); elsewhere the process logger. */
function current(): Logger {
  return jobScope.getStore()?.logger ?? processLogger();
}

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
    const child = options.logger.child(options.base ?? {}, { serializers: { err: safeError, error: safeError } });
    if (options.level) child.level = options.level;
    root = withJobFields(child);
    return root;
  }
  const level = options.level ?? (root?.level as LevelWithSilent | undefined) ?? initialLevel();
  root = build(level, options.base ?? {}, options.destination);
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
