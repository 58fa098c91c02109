/**
 * A job's stored outcome (docs/outcomes.md): the record an opted-in class leaves under its jid when it
 * ends, for as long as its `result.ttl`. Read as hostile text: a key that is not what tsq writes reads as
 * no outcome, and a field of the wrong type is left out.
 *
 *   tsq:result:<jid>  {"result":{"rows":412},"status":"done","class":"ReportJob","queue":"default","at":1764614400.5}
 */
import type { Redis } from "ioredis";
import { resultKey } from "../../wire/keys.js";
import { parseRecord, type JobResult } from "../../features/outcomes/record.js";

export interface StoredOutcome extends JobResult {
  class?: string;
  queue?: string;
  /** Epoch seconds of the end. */
  at?: number;
}

export class JobOutcomes {
  constructor(private readonly redis: Redis) {}

  /** The job's last recorded end, or undefined (never opted in, expired, or not a record tsq wrote). */
  async get(jid: string): Promise<StoredOutcome | undefined> {
    const text = await this.redis.get(resultKey(jid));
    const outcome: StoredOutcome | undefined = parseRecord(text);
    if (!outcome || text === null) return outcome;
    const record = JSON.parse(text) as Record<string, unknown>; // parseRecord parsed it: an object
    if (typeof record.class === "string") outcome.class = record.class;
    if (typeof record.queue === "string") outcome.queue = record.queue;
    if (typeof record.at === "number" && Number.isFinite(record.at)) outcome.at = record.at;
    return outcome;
  }
}
