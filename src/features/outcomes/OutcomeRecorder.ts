/**
 * OutcomeRecorder: writes the end of an opted-in job (done, failed, dead, cancelled: never a suspended
 * execution), one record-outcome-2.lua call per job, sent in
 * the tick of its acknowledgement so auto-pipelining carries it with the ack (or the next fetch) in one
 * round trip:
 *
 *   SET tsq:result:<jid> <record JSON> EX <ttl s>
 *   XADD tsq:outcomes MAXLEN ~ 10000 * jid <jid> class <name> queue <q> status <s> [error_class .. error_message ..]
 *
 * The key and the event land together (a waiter that reads the key after the event, or the event after
 * reading no key, sees a consistent pair: see OutcomeWatcher). A job whose class does not opt in costs
 * a field read and a map lookup, no Redis command. The slot does not wait for the write, unless more
 * than MAX_PENDING are in flight (Redis slow or away); stop() waits for those in flight.
 */
import { OUTCOMES, resultKey } from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { displayClass, type JobPayload } from "../../wire/payload.js";
import { errorClassName } from "../../server/JobRetry.js";
import type { ServerContext } from "../../server/context.js";
import type { JobEnd, Service } from "../../server/plugin.js";
import { refuseOnCluster } from "../../server/clusterRefusal.js";
import { classPolicy, readPolicy, type ResultPolicy } from "./policy.js";
import type { OutcomeError } from "./record.js";
import { recordOutcomeLua } from "./scripts.js";

/** Stream entries kept (approximately: MAXLEN ~ trims whole nodes): ~1-2 MB of Redis. */
export const STREAM_LENGTH = 10_000;
/** Error messages longer than this many characters are cut in the stream entry (the key keeps 4 KB). */
const STREAM_MESSAGE_CHARS = 256;
const RECORD_MESSAGE_CHARS = 4096;
/** Writes in flight before a finishing job waits for its own (bounded memory while Redis is slow). */
const MAX_PENDING = 1024;

export class OutcomeRecorder implements Service {
  readonly name = "outcomes";
  private readonly policies = new Map<string, ResultPolicy>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly ctx: ServerContext) {
    for (const name of ctx.registry.names()) {
      const policy = classPolicy(name, ctx.registry.get(name)?.options);
      if (policy) this.policies.set(name, policy);
    }
    if (this.policies.size > 0)
      refuseOnCluster(
        ctx,
        `job outcomes (static options result: ${[...this.policies.keys()].join(", ")})`,
        "an outcome is stored in its job's slot group, and waitUntilFinished and the outcome stream look it up " +
          "by jid alone, which names no group",
      );
  }

  start(): void {}

  async stop(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** The onEnd hook: undefined at once, or a promise of this job's write under backpressure. */
  record(job: JobPayload, queue: string, end: JobEnd): Promise<void> | undefined {
    const status = end.outcome.status;
    // A sleep or a wait is not an end: nothing to record, announce or resolve.
    if (status === "suspended") return undefined;
    const policy = this.policyOf(job);
    if (!policy) return undefined;
    const klass = displayClass(job);
    const record: Record<string, unknown> = { status, class: klass, queue, at: nowSeconds() };
    let error = end.error ? describe(end.error) : undefined;
    let result: string | undefined; // JSON text, measured once and pasted in (not serialized twice)
    if (status === "done") {
      const stored = storedResult(end.result, policy.maxBytes);
      if ("error" in stored) error = stored.error;
      else result = stored.json;
    }
    const rest = JSON.stringify(error ? { ...record, error } : record);
    const json = result === undefined ? rest : `{"result":${result},${rest.slice(1)}`;
    const fields = ["jid", job.jid, "class", klass, "queue", queue, "status", status];
    if (error) fields.push("error_class", error.class, "error_message", error.message.slice(0, STREAM_MESSAGE_CHARS));
    const write = recordOutcomeLua
      .run(this.ctx.redis, resultKey(job.jid), OUTCOMES, json, policy.ttlSeconds, STREAM_LENGTH, ...fields)
      .then(() => undefined)
      .catch((writeError: unknown) =>
        this.ctx.logger.error({ err: writeError, jid: job.jid }, "could not record the job's outcome"),
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
    return this.pending.size > MAX_PENDING ? write : undefined;
  }

  /** Whether `job`'s outcome is recorded (its class or push opts in): its progress is then announced too. */
  records(job: JobPayload): boolean {
    return this.policyOf(job) !== undefined;
  }

  private policyOf(job: JobPayload): ResultPolicy | undefined {
    if (job.result !== undefined) {
      const policy = readPolicy(job.result);
      if (typeof policy !== "string") return policy;
      this.ctx.logger.warn({ jid: job.jid, reason: policy }, "ignoring the job's `result` option");
      return undefined;
    }
    return this.policies.get(job.class);
  }
}

function describe(error: Error): OutcomeError {
  return { class: errorClassName(error), message: String(error.message).slice(0, RECORD_MESSAGE_CHARS) };
}

/** The result as JSON within `maxBytes`, nothing (undefined), or the marker saying why it is not stored. */
function storedResult(result: unknown, maxBytes: number): { json: string | undefined } | { error: OutcomeError } {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { error: { class: "ResultNotJson", message: `the result was not stored: it is not JSON (${reason})` } };
  }
  if (json === undefined) return { json: undefined };
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes)
    return {
      error: {
        class: "ResultTooLarge",
        message: `the result was not stored: ${bytes} bytes of JSON, over the ${maxBytes}-byte cap (result.maxBytes)`,
      },
    };
  return { json };
}
