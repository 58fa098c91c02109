/**
 * What an outcome looks like in Redis, and reading it back. Everything read from Redis is hostile
 * text: a record or stream entry that is not what tsq writes is ignored, never trusted.
 *
 *   tsq:result:<jid>  STRING  {"status":"done","result":42,"class":"HardJob","queue":"default","at":1764614400.5}
 *                             {"status":"failed","error":{"class":"TypeError","message":"boom"},...}
 *   tsq:outcomes      STREAM  1764614400500-0  jid <jid> class <name> queue <q> status done|failed|dead|cancelled
 *                                              [error_class <name> error_message <text>]
 *                     1764614400400-0  jid <jid> class <name> queue <q> progress <n> [data <JSON>]
 *
 * Only ends are recorded: a suspended execution (a durable job's sleep or wait) is not one.
 */
import type { FinalStatus } from "../../server/hooks.js";

/** How the job ended: the worker's own statuses (server/hooks.ts), every one but `suspended`. */
export type OutcomeStatus = FinalStatus;

export interface OutcomeError {
  /** The error's class name ("TypeError"), or "ResultTooLarge" / "ResultNotJson" for a result not stored. */
  class: string;
  message: string;
}

/** A job's last recorded end, as `waitUntilFinished` returns it. */
export interface JobResult {
  status: OutcomeStatus;
  /** What `perform` returned, after a JSON round trip (status "done"; undefined if it returned nothing). */
  result?: unknown;
  /** Why it failed (status "failed" or "dead"), the cancel (status "cancelled"), or why a "done" result was not stored. */
  error?: OutcomeError;
}

/** One completion event of the `tsq:outcomes` stream. */
export interface OutcomeEvent {
  /** The stream entry id (`<ms>-<seq>`). */
  id: string;
  jid: string;
  class: string;
  queue: string;
  status: OutcomeStatus;
  error?: OutcomeError;
}

/** One progress report of an opted-in job on the `tsq:outcomes` stream (`status` tells it from an end). */
export interface ProgressEvent {
  /** The stream entry id (`<ms>-<seq>`). */
  id: string;
  jid: string;
  class: string;
  queue: string;
  status: "progress";
  /** The number the job reported. */
  progress: number;
  /** Its `data`, when it gave some. */
  data?: unknown;
}

const STATUSES: ReadonlySet<string> = new Set<OutcomeStatus>(["done", "failed", "dead", "cancelled"]);

function isStatus(value: unknown): value is OutcomeStatus {
  return typeof value === "string" && STATUSES.has(value);
}

function errorOf(value: unknown): OutcomeError | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { class: name, message } = value as Record<string, unknown>;
  return typeof name === "string" && typeof message === "string" ? { class: name, message } : undefined;
}

/** A stored record (tsq:result:<jid>), or undefined when missing or not one tsq wrote. */
export function parseRecord(text: string | null): JobResult | undefined {
  if (text === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (!isStatus(record.status)) return undefined;
  const out: JobResult = { status: record.status };
  if ("result" in record) out.result = record.result;
  const error = errorOf(record.error);
  if (error) out.error = error;
  return out;
}

/** A stream entry's id and fields (`[id, [field, value, ...]]`), or undefined when it is not that shape. */
function fieldsOf(entry: unknown): { id: string; fields: Map<string, string> } | undefined {
  if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Array.isArray(entry[1])) return undefined;
  const fields = new Map<string, string>();
  const list = entry[1] as unknown[];
  for (let i = 0; i + 1 < list.length; i += 2) {
    const [name, value] = [list[i], list[i + 1]];
    if (typeof name === "string" && typeof value === "string") fields.set(name, value);
  }
  return { id: entry[0], fields };
}

/** One stream entry's end, or undefined when it is no end tsq wrote (a progress entry, or hostile text). */
export function parseEvent(entry: unknown): OutcomeEvent | undefined {
  const { id, fields } = fieldsOf(entry) ?? {};
  if (id === undefined || !fields) return undefined;
  const [jid, klass, queue, status] = ["jid", "class", "queue", "status"].map((name) => fields.get(name));
  if (!jid || klass === undefined || queue === undefined || !isStatus(status)) return undefined;
  const event: OutcomeEvent = { id, jid, class: klass, queue, status };
  const errorClass = fields.get("error_class");
  if (errorClass !== undefined) event.error = { class: errorClass, message: fields.get("error_message") ?? "" };
  return event;
}

/** One stream entry's progress report, or undefined when it is none tsq wrote (bad JSON data is left out). */
export function parseProgressEvent(entry: unknown): ProgressEvent | undefined {
  const { id, fields } = fieldsOf(entry) ?? {};
  if (id === undefined || !fields || fields.has("status")) return undefined;
  const [jid, klass, queue, n] = ["jid", "class", "queue", "progress"].map((name) => fields.get(name));
  const progress = Number(n);
  if (!jid || klass === undefined || queue === undefined || !n || !Number.isFinite(progress)) return undefined;
  const event: ProgressEvent = { id, jid, class: klass, queue, status: "progress", progress };
  const data = fields.get("data");
  if (data !== undefined)
    try {
      event.data = JSON.parse(data) as unknown;
    } catch {
      // not JSON: not what tsq wrote, so not passed on
    }
  return event;
}

/** The entries of an XREAD reply for the one stream read (`[[name, [[id, fields], ...]]]`), or none. */
export function entriesOf(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) return [];
  const stream: unknown = reply[0];
  return Array.isArray(stream) && Array.isArray(stream[1]) ? (stream[1] as unknown[]) : [];
}
