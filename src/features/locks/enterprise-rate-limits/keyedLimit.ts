/**
 * The one typed call of keyed-limit-6.lua: named arguments, the keys built here from keys.ts, the reply
 * as a record (KeyedLimiter's enter, leave and resume all go through it).
 */
import {
  KEYED_WAITING,
  QUEUES,
  keyedHoldersKey,
  keyedParkedKey,
  keyedReadyKey,
  keyedWindowKey,
  queueKey,
} from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { tagged } from "../../../platform/redis/clusterConnection.js";
import { keyedLimitLua } from "./scripts.js";

export interface KeyedLimitCall {
  /** "enter" before a job runs, "leave" after it, "resume" for a resumer's turn on the key. */
  op: "enter" | "leave" | "resume";
  /** The class (its name on the wire) and the limit key its `static limit` computed for the job. */
  className: string;
  key: string;
  /** The job's jid; "" for resume. */
  jid: string;
  /** Seconds a running job's lease lives without a refresh. */
  leaseTtl: number;
  /** Jobs per key at once; 0 for none. */
  concurrency: number;
  /** Admissions per window; 0 for none. */
  rate: number;
  windowMs: number;
  /** enter: the job as it is parked; else "". */
  job: string;
  /** Most jobs one key may have parked. */
  maxParked: number;
  /** Most jobs handed back per call. */
  perTurn: number;
}

/** enter: status 1 run, 0 parked, -1 refused; leave and resume: status = jobs handed back. */
export interface KeyedLimitReply {
  status: number;
  /** Jobs parked on the key after the call. */
  parked: number;
}

export async function keyedLimit(redis: TsqRedis, call: KeyedLimitCall): Promise<KeyedLimitReply> {
  const { className, key } = call;
  const [status, parked] = await keyedLimitLua.run(
    redis,
    keyedHoldersKey(className, key),
    keyedWindowKey(className, key),
    keyedParkedKey(className, key),
    keyedReadyKey(className),
    KEYED_WAITING,
    QUEUES,
    call.op,
    call.jid,
    Math.max(1, Math.round(call.leaseTtl * 1000)), // ms; PEXPIRE refuses 0
    call.concurrency,
    call.rate,
    call.windowMs,
    key,
    className,
    tagged(redis, queueKey("")),
    call.job,
    call.maxParked,
    call.perTurn,
  );
  return { status, parked };
}
