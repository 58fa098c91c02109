/**
 * Logging: one pino logger per process. JSON lines on stdout, or human-readable lines when stdout is a
 * terminal (`TSQ_LOG_FORMAT=json|pretty` overrides). Lines logged while a job runs carry the job's
 * context (jid, class, queue) without the job passing a logger around, via AsyncLocalStorage.
 *
 * Every line passes through `redactText` on its way out and errors are serialized by `safeError`, so
 * no password reaches the log whatever is logged (see secrets.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from "pino";
import { PinoPretty } from "pino-pretty";
import { redactText, safeError } from "./secrets.js";

export type { Logger } from "pino";

export interface JobLogContext {
  jid: string;
  class: string;
  queue: string;
  [field: string]: unknown;
}

const jobContext = new AsyncLocalStorage<JobLogContext>();

/** Pretty when stdout is a terminal, unless TSQ_LOG_FORMAT says otherwise. */
function wantsPretty(): boolean {
  const format = process.env.TSQ_LOG_FORMAT;
  if (format === "json") return false;
  if (format === "pretty") return true;
  return process.stdout.isTTY === true;
}

function prettyStream(): DestinationStream {
  // Synchronous, on this thread: a worker-thread transport could lose the last lines of a crash.
  return PinoPretty({ colorize: true, sync: true, translateTime: "SYS:HH:MM:ss.l", ignore: "hostname" });
}

function build(level: LevelWithSilent, base: Record<string, unknown>, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid, ...base },
    // A copy: pino's default merge writes the line's own fields into the object the mixin returns.
    mixin: () => {
      const context = jobContext.getStore();
      return context ? { ...context } : {};
    },
    serializers: { err: safeError, error: safeError },
    hooks: { streamWrite: redactText },
  };
  const target = destination ?? (wantsPretty() ? prettyStream() : undefined);
  return target ? pino(options, target) : pino(options);
}

let root = build((process.env.TSQ_LOG_LEVEL as LevelWithSilent | undefined) ?? "info", {});

/** The process logger. Inside a job, every line includes the job's jid, class and queue. */
export function logger(): Logger {
  return root;
}

/**
 * Rebuilds the process logger, e.g. `-v` (debug) or a cluster child's `{ child, group }` tags. The level
 * defaults to the current one, which starts as TSQ_LOG_LEVEL (default "info").
 */
export function configureLogger(options: {
  level?: LevelWithSilent;
  base?: Record<string, unknown>;
  destination?: DestinationStream;
}): Logger {
  root = build(options.level ?? (root.level as LevelWithSilent), options.base ?? {}, options.destination);
  return root;
}

/** The context of the job being performed here, if any. */
export function currentJobContext(): JobLogContext | undefined {
  return jobContext.getStore();
}

/** Runs `fn` with `context` attached to every line logged inside it. */
export function withJobContext<T>(context: JobLogContext, fn: () => T): T {
  return jobContext.run(context, fn);
}
