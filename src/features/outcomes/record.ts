/**
 * What an outcome looks like in Redis, and reading it back. Everything read from Redis is hostile
 * text: a record or stream entry that is not what tsq writes is ignored, never trusted.
 *
 *   tsq:result:<jid>  STRING  {"status":"done","result":42,"class":"HardJob","queue":"default","at":1764614400.5}
 *                             {"status":"failed","error":{"class":"TypeError","message":"boom"},...}
 *   tsq:outcomes      STREAM  1764614400500-0  jid <jid> class <name> queue <q> status done|failed|dead|cancelled
 *                                              [error_class <name> error_message <text>]
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

/** One stream entry (`[id, [field, value, ...]]`), or undefined when it is not one tsq wrote. */
export function parseEvent(entry: unknown): OutcomeEvent | undefined {
  if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Array.isArray(entry[1])) return undefined;
  const fields = new Map<string, string>();
  const list = entry[1] as unknown[];
  for (let i = 0; i + 1 < list.length; i += 2) {
    const [name, value] = [list[i], list[i + 1]];
    if (typeof name === "string" && typeof value === "string") fields.set(name, value);
  }
  const [jid, klass, queue, status] = ["jid", "class", "queue", "status"].map((name) => fields.get(name));
  if (!jid || klass === undefined || queue === undefined || !isStatus(status)) return undefined;
  const event: OutcomeEvent = { id: entry[0], jid, class: klass, queue, status };
  const errorClass = fields.get("error_class");
  if (errorClass !== undefined) event.error = { class: errorClass, message: fields.get("error_message") ?? "" };
  return event;
}
