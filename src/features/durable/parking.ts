/**
 * The typed calls of durable-park-5.lua (waitFor parks a job) and durable-signal-5.lua (signal wakes
 * them): named arguments, the keys built here from keys.ts, the replies as records. The two scripts are
 * atomic with each other, so a signal sent before, during or after a park is never lost.
 */
import {
  DURABLE_PREFIX,
  DURABLE_WAITING_INDEX,
  QUEUES,
  SCHEDULE,
  durableKey,
  durableSignalKey,
  durableWaitersKey,
  queueKey,
} from "../../wire/keys.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { tagged } from "../../platform/redis/clusterConnection.js";
import { durableParkLua, durableSignalLua } from "./scripts.js";

export interface ParkCall {
  /** The job parking; its journal is `tsq:durable:<jid>`. */
  jid: string;
  /** The event waited on. */
  event: string;
  /** The wait's step name and its position in the run (Journal#next). */
  stepName: string;
  position: number;
  /** The job's payload, JSON text, as it goes into `schedule`. */
  payload: string;
  /** Epoch seconds (whole) when the wait times out; only the first park of a wait sets it. */
  deadlineSeconds: number;
  /** Epoch seconds (float). */
  nowSeconds: number;
  /** Seconds the journal lives after its last write; the park keeps it until the deadline plus this. */
  journalTtlSeconds: number;
}

/**
 * signal: the data came (recorded as the step); timeout: the deadline passed; parked: the job waits;
 * cancelled: the journal is marked cancelled, nothing was written.
 */
export type ParkReply =
  { status: "signal"; data: string } | { status: "timeout" } | { status: "parked" } | { status: "cancelled" };

export async function park(redis: TsqRedis, call: ParkCall): Promise<ParkReply> {
  const [status, data] = await durableParkLua.run(
    redis,
    durableKey(call.jid),
    durableSignalKey(call.event),
    durableWaitersKey(call.event),
    SCHEDULE,
    DURABLE_WAITING_INDEX,
    call.jid,
    call.stepName,
    call.position,
    call.payload,
    call.deadlineSeconds,
    call.nowSeconds,
    call.journalTtlSeconds,
    call.event,
  );
  if (status === "signal") return { status, data: data ?? "" };
  if (status === "timeout" || status === "cancelled") return { status };
  return { status: "parked" };
}

export interface WakeCall {
  event: string;
  /** The signal's data, JSON text. */
  data: string;
  /** Seconds the signal is kept for waits that start later. */
  retentionSeconds: number;
  /**
   * The woken jobs' `enqueued_at`, JSON text (the client's timestamp format): they go straight to their
   * queues. "": they stay due in `schedule` for the poller (a client with middleware must see them).
   */
  enqueuedAt: string;
}

/** Stores the signal and enqueues every job parked on the event (or makes it due); how many were woken. */
export async function wake(redis: TsqRedis, call: WakeCall): Promise<number> {
  return durableSignalLua.run(
    redis,
    durableSignalKey(call.event),
    durableWaitersKey(call.event),
    SCHEDULE,
    QUEUES,
    DURABLE_WAITING_INDEX,
    call.data,
    call.retentionSeconds,
    tagged(redis, DURABLE_PREFIX),
    call.event,
    call.enqueuedAt,
    tagged(redis, queueKey("")),
  );
}
