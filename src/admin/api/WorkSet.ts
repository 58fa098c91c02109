/**
 * The jobs running now, as `Sidekiq::WorkSet`: each live process's work hash, one field per busy
 * slot (`tid`) holding `{"queue","payload":<job JSON text>,"run_at":<epoch s>}`. Sidekiq >= 6.4.2 and
 * tsq write `<identity>:work`; 6.4.1 writes `<identity>:workers`, read when `:work` is empty. tsq adds
 * `"progress":{"n","data","at"}` to a job's entry once it reports progress (docs/outcomes.md).
 */
import type { Redis } from "ioredis";
import { legacyWorkKey, processKey, workKey } from "../../wire/keys.js";
import { JobRecord } from "./JobRecord.js";
import { processIdentities } from "./scan.js";

export interface WorkRecord {
  /** Identity of the process running the job. */
  process: string;
  /** Its slot (Sidekiq's thread id). */
  tid: string;
  queue: string;
  /** Epoch seconds the job started. */
  runAt: number;
  job: JobRecord;
  /** What the job last reported with `this.progress(n, data?)` (tsq's `progress` field), if anything. */
  progress?: WorkProgress;
}

export interface WorkProgress {
  n: number;
  data?: unknown;
  /** Epoch seconds of the report. */
  at: number;
}

/** The `progress` field of a work entry, or undefined when absent or not what tsq writes. */
function parseProgress(value: unknown): WorkProgress | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const { n, data, at } = value as Record<string, unknown>;
  if (typeof n !== "number" || !Number.isFinite(n)) return undefined;
  const progress: WorkProgress = { n, at: typeof at === "number" && Number.isFinite(at) ? at : 0 };
  if (data !== undefined) progress.data = data;
  return progress;
}

function parseWork(process: string, tid: string, text: string): WorkRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  const work = value as { queue?: unknown; payload?: unknown; run_at?: unknown; progress?: unknown };
  const queue = typeof work.queue === "string" ? work.queue : "default";
  // The payload is the job's JSON text (double-encoded); 6.4.1's reader also accepts an object.
  const payload = typeof work.payload === "string" ? work.payload : JSON.stringify(work.payload ?? null);
  const runAt = Number(work.run_at);
  const record: WorkRecord = {
    process,
    tid,
    queue,
    runAt: Number.isFinite(runAt) ? runAt : 0,
    job: new JobRecord(payload, queue),
  };
  const progress = parseProgress(work.progress);
  if (progress) record.progress = progress;
  return record;
}

export class WorkSet {
  constructor(private readonly redis: Redis) {}

  /** Every running job of every live process, oldest start first. */
  async list(): Promise<WorkRecord[]> {
    const identities = await processIdentities(this.redis);
    const pipeline = this.redis.pipeline();
    for (const id of identities) pipeline.exists(processKey(id)).hgetall(workKey(id)).hgetall(legacyWorkKey(id));
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    const found: WorkRecord[] = [];
    identities.forEach((id, i) => {
      const [alive, work, legacy] = [0, 1, 2].map((k) => results[i * 3 + k]?.[1]);
      if (Number(alive) !== 1) return;
      const hash = (Object.keys(work as object).length > 0 ? work : legacy) as Record<string, string>;
      for (const [tid, text] of Object.entries(hash)) {
        const record = parseWork(id, tid, text);
        if (record) found.push(record);
      }
    });
    return found.sort((a, b) => a.runAt - b.runAt);
  }

  /** The running job with this jid, or null. */
  async findWork(jid: string): Promise<WorkRecord | null> {
    return (await this.list()).find((work) => work.job.jid === jid) ?? null;
  }

  /** Jobs running, as of each process's last heartbeat: the sum of the `busy` fields. */
  async size(): Promise<number> {
    const identities = await processIdentities(this.redis);
    if (identities.length === 0) return 0;
    const results = (await this.redis.pipeline(identities.map((id) => ["hget", processKey(id), "busy"])).exec()) ?? [];
    return results.reduce((sum, [error, busy]) => {
      if (error) throw error;
      const n = Number(busy ?? 0);
      return sum + (Number.isFinite(n) ? n : 0);
    }, 0);
  }
}
