/**
 * JobLines: the worker's own two lines of every job, `start` and `done`.
 *
 * Through pino, each line costs a level check, a mixin call, the fields' serialization (pino's safe
 * stringify tries JSON.stringify inside a try per value) and the line's assembly, and binding the job's
 * fields once needed a child logger per job. For a logger tsq built, the text of both lines is known but
 * for the time and the elapsed milliseconds, so it is put together here from the logger's own bindings
 * (pid and tags, as pino holds them ready) and the job's fields, serialized once per job:
 *
 *   {"level":30,"time":1796684745896,"pid":24953,"child":1,"jid":"a1b2","class":"HardJob","queue":"default","msg":"start"}
 *   {"level":30,"time":1796684745897,"pid":24953,"child":1,"jid":"a1b2","class":"HardJob","queue":"default","elapsed_ms":0.012,"status":"done","msg":"done"}
 *
 * byte for byte what pino writes for the same call (a test compares the two). The lines go to the
 * logger's own destination: a LineBatch redacts its batches, any other destination gets each line
 * through `redactText`, as pino's hook does. Any other logger (an application's, a level above info, a
 * field pino would write differently) logs both lines through pino with the job's fields added.
 */
import { pino } from "pino";
import { builtByTsq, type JobLogContext, type Logger } from "./logger.js";
import { LineBatch } from "./logLines.js";
import { redactText } from "./secrets.js";

export interface JobLines {
  start(): void;
  done(elapsedMs: number): void;
}

/** pino's numeric level of `info`. */
const INFO = 30;

interface PinoInternals {
  write(line: string): void;
}

export function jobLines(logger: Logger, context: JobLogContext): JobLines {
  if (!builtByTsq(logger) || !logger.isLevelEnabled("info")) return throughPino(logger);
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as PinoInternals | undefined;
  const bindings = internals[pino.symbols.chindingsSym];
  const fields = serializedFields(context);
  if (stream === undefined || typeof bindings !== "string" || fields === undefined) return throughPino(logger);
  const redacts = stream instanceof LineBatch;
  const head = `{"level":${INFO},"time":`;
  const tail = bindings + fields;
  const write = (line: string) => stream.write(redacts ? line : redactText(line));
  return {
    start: () => write(`${head}${Date.now()}${tail},"msg":"start"}\n`),
    done: (elapsedMs) =>
      write(`${head}${Date.now()}${tail},"elapsed_ms":${finite(elapsedMs)},"status":"done","msg":"done"}\n`),
  };
}

/** pino writes a number that is not finite as null. */
function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/** The lines through pino, whose mixin (or withJobFields) adds the job's fields. */
function throughPino(logger: Logger): JobLines {
  return {
    start: () => logger.info("start"),
    done: (elapsedMs) => logger.info({ elapsed_ms: elapsedMs, status: "done" }, "done"),
  };
}

/** A string JSON.stringify writes as is between its quotes: no quote, backslash, control character or surrogate. */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * The job's fields as pino writes a line's string fields: `,"key":"value"` each. Undefined when a key
 * needs escaping, a value is not a string, or is a string JSON.stringify escapes differently from pino
 * (a lone surrogate): pino writes those. A plain value is copied as it is: 160 ns for a job's three
 * fields, where one JSON.stringify of the object took 400.
 */
function serializedFields(context: JobLogContext): string | undefined {
  let fields = "";
  for (const key in context) {
    const value = context[key];
    if (typeof value !== "string" || !PLAIN.test(key)) return undefined;
    if (PLAIN.test(value)) fields += `,"${key}":"${value}"`;
    else if (value.isWellFormed()) fields += `,"${key}":${JSON.stringify(value)}`;
    else return undefined;
  }
  return fields;
}
