/**
 * The JSON that `tsqctl ... --json` prints, one function per shape. Keys are snake_case, as in
 * Sidekiq's payloads and its Web UI's /stats. Times are epoch seconds (floats) whatever format the job
 * was stored in; absent values are null. Each shape is documented in docs/admin.md.
 */
import type { JobRecord, ProcessRecord, SortedEntry, StatsHistory, StatsSnapshot, WorkRecord } from "../api/index.js";

export interface JobJson {
  jid: string | null;
  class: string | null;
  display_class: string | null;
  queue: string;
  /** As stored: compressed args are never inflated in a listing (one row could inflate to gigabytes). */
  args: unknown[];
  /** Present (true) only when the args are compressed as GitLab does; `args` is then [base64 text]. */
  args_compressed?: true;
  /** Bytes of the compressed args as stored (base64 decoded); present with `args_compressed`. */
  args_compressed_bytes?: number;
  created_at: number | null;
  enqueued_at: number | null;
  retry_count: number | null;
  error_class: string | null;
  error_message: string | null;
  failed_at: number | null;
  retried_at: number | null;
  /** False when the stored text is not a job (then `args` is [text] and `payload` may be null). */
  valid: boolean;
  /** The stored job, parsed; null when the text is not a JSON object. */
  payload: Record<string, unknown> | null;
}

export interface EntryJson extends JobJson {
  /** Epoch seconds: when it is due (schedule, retry) or died (dead). */
  score: number;
  /** `score` as an ISO 8601 time. */
  at: string;
}

export interface QueueJson {
  name: string;
  size: number;
  latency: number;
  paused: boolean;
}

export interface ProcessJson {
  identity: string;
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  queues: string[];
  version: string | null;
  embedded: boolean;
  started_at: number;
  concurrency: number;
  busy: number;
  beat: number;
  quiet: boolean;
  rss_kb: number;
  rtt_us: number;
  leader: boolean;
  info: Record<string, unknown>;
}

export interface WorkJson {
  process: string;
  tid: string;
  queue: string;
  run_at: number;
  jid: string | null;
  class: string | null;
  args: unknown[];
  args_compressed?: true;
  args_compressed_bytes?: number;
  payload: Record<string, unknown> | null;
  /** `{ n, data?, at }` once the job reported progress (docs/outcomes.md). */
  progress?: { n: number; data?: unknown; at: number };
}

export interface StatsJson {
  processed: number;
  failed: number;
  enqueued: number;
  scheduled_size: number;
  retry_size: number;
  dead_size: number;
  processes_size: number;
  workers_size: number;
  default_queue_latency: number;
  queues: Record<string, number>;
  history: { processed: Record<string, number>; failed: Record<string, number> };
}

/** What an action did: `ids` are the jids or identities acted on (empty for `clear` and `--all`). */
export interface ActionJson {
  action: string;
  target: string;
  count: number;
  ids: string[];
}

type ArgsJson = Pick<JobJson, "args" | "args_compressed" | "args_compressed_bytes">;

/**
 * A row's args, never inflated: compressed args are shown as stored with their size, as the dashboard's
 * lists show "compressed, N KB" (a hostile dead job inflating to 90 MB would cost seconds and GBs a row).
 */
function argsJson(job: JobRecord): ArgsJson {
  const bytes = job.compressedArgsBytes;
  if (bytes === undefined) return { args: job.storedArgs };
  return { args: job.storedArgs, args_compressed: true, args_compressed_bytes: bytes };
}

export function jobJson(job: JobRecord): JobJson {
  return {
    jid: job.jid ?? null,
    class: job.klass ?? null,
    display_class: job.displayClass ?? null,
    queue: job.queue,
    ...argsJson(job),
    created_at: job.createdAt ?? null,
    enqueued_at: job.enqueuedAt ?? null,
    retry_count: job.retryCount ?? null,
    error_class: job.errorClass ?? null,
    error_message: job.errorMessage ?? null,
    failed_at: job.failedAt ?? null,
    retried_at: job.retriedAt ?? null,
    valid: job.valid,
    payload: job.isObject ? { ...job.item } : null,
  };
}

export function entryJson(entry: SortedEntry): EntryJson {
  return {
    ...jobJson(entry),
    score: entry.score,
    at: Number.isFinite(entry.score) ? entry.at.toISOString() : String(entry.score),
  };
}

export function processJson(p: ProcessRecord): ProcessJson {
  return {
    identity: p.identity,
    hostname: p.hostname,
    pid: p.pid,
    tag: p.tag,
    labels: p.labels,
    queues: p.queues,
    version: p.version,
    embedded: p.embedded,
    started_at: p.startedAt,
    concurrency: p.concurrency,
    busy: p.busy,
    beat: p.beat,
    quiet: p.quiet,
    rss_kb: p.rssKb,
    rtt_us: p.rttUs,
    leader: p.leader,
    info: p.info,
  };
}

export function workJson(w: WorkRecord): WorkJson {
  const job = jobJson(w.job);
  return {
    process: w.process,
    tid: w.tid,
    queue: w.queue,
    run_at: w.runAt,
    jid: job.jid,
    class: job.class,
    ...argsJson(w.job),
    payload: job.payload,
    ...(w.progress ? { progress: w.progress } : {}),
  };
}

export function statsJson(s: StatsSnapshot, history: StatsHistory): StatsJson {
  return {
    processed: s.processed,
    failed: s.failed,
    enqueued: s.enqueued,
    scheduled_size: s.scheduledSize,
    retry_size: s.retrySize,
    dead_size: s.deadSize,
    processes_size: s.processesSize,
    workers_size: s.workersSize,
    default_queue_latency: s.defaultQueueLatency,
    queues: Object.fromEntries(s.queues),
    history: { processed: history.processed, failed: history.failed },
  };
}
