/**
 * Logging: one pino logger per process, JSON lines on stdout. Lines logged while a job runs carry the
 * job's context (jid, class, queue) without the job passing a logger around, via AsyncLocalStorage.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from "pino";

export type { Logger } from "pino";

export interface JobLogContext {
  jid: string;
  class: string;
  queue: string;
  [field: string]: unknown;
}

const jobContext = new AsyncLocalStorage<JobLogContext>();

function build(level: LevelWithSilent, base: Record<string, unknown>, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid, ...base },
    // A copy: pino's default merge writes the line's own fields into the object the mixin returns.
    mixin: () => {
      const context = jobContext.getStore();
      return context ? { ...context } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
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

/** Runs `fn` with `context` attached to every line logged inside it. */
export function withJobContext<T>(context: JobLogContext, fn: () => T): T {
  return jobContext.run(context, fn);
}
