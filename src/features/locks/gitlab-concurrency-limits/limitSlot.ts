/**
 * The one typed call of limit-slot-4.lua: named arguments, the keys built here from keys.ts, the reply
 * as a record. ConcurrencyLimiter (enter, leave, sweep) and the client's admission (admit) both call it.
 */
import { LIMITS, QUEUES, limitParkedKey, limitSlotsKey, queueKey } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { tagged } from "../../../platform/redis/clusterConnection.js";
import { limitSlotLua } from "./scripts.js";

export interface LimitSlotCall {
  /** "enter" before a job runs, "leave" after it (or a sweep, with `jid` ""), "admit" at push. */
  op: "enter" | "leave" | "admit";
  /** The class whose slots these are (its name on the wire). */
  className: string;
  /** The holder; "" for a sweep that only drops expired slots and hands them on. */
  jid: string;
  /** Seconds a slot lives without a refresh. */
  slotTtl: number;
  /** > 0 slots; 0 no limit (parked jobs are all resumed); < 0 paused. */
  limit: number;
  /** Epoch ms. */
  nowMs: number;
  /** enter, admit: the job as it is parked; leave: "". */
  job: string;
  /** Most jobs the class may have parked. */
  maxParked: number;
  /** enter: the job was resumed before, so it parks at the head and keeps its turn. */
  resumed: boolean;
}

/** enter: 1 run, 0 parked, -1 refused; admit: 1 granted, 0 parked, -1 refused; leave: jobs resumed. */
export interface LimitSlotReply {
  status: number;
  /** Live holders (besides the caller, for enter). */
  running: number;
  /** Jobs on the class's parked list after the call. */
  parked: number;
}

/** A slot's TTL in whole ms, at least 1 (PEXPIRE refuses 0). */
export function slotTtlMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}

export async function limitSlot(redis: TsqRedis, call: LimitSlotCall): Promise<LimitSlotReply> {
  const [status, running, parked] = await limitSlotLua.run(
    redis,
    limitSlotsKey(call.className),
    limitParkedKey(call.className),
    LIMITS,
    QUEUES,
    call.op,
    call.jid,
    slotTtlMs(call.slotTtl),
    call.limit,
    call.nowMs,
    call.className,
    tagged(redis, queueKey("")),
    call.job,
    call.maxParked,
    call.resumed ? "1" : "0",
  );
  return { status, running, parked };
}
