/**
 * The supervisor's records: its options, one Child per forked process, one Slot per planned child (with
 * its restart back-off), the Fleet view its health watch reads (so HealthWatch depends on this file, not
 * on the Supervisor), and the wait for a child's first heartbeat.
 */
import type { Worker } from "node:cluster";
import type { Logger } from "../platform/logger.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { WorkerOptions } from "../platform/config/options.js";
import type { ChildPlan } from "./groups.js";
import type { FromChild } from "./ipc.js";

export type RestartReason = "crash" | "memory" | "hang" | "rolling" | "abandoned";

export interface SupervisorOptions {
  worker: WorkerOptions;
  plan: ChildPlan[];
  /** Seconds without a heartbeat after which a live child counts as hung. */
  hangThreshold: number;
  /** RSS limit per child in MB; undefined = no limit. */
  maxMemoryMb: number | undefined;
  /** Abandoned jobs still running (heartbeat field `abandoned`) at which a child is replaced; 0 = never. */
  maxAbandoned: number;
  logger: Logger;
  /** For pruning and the heartbeat watch. */
  redis: TsqRedis;
  /** The connection to a child's shard (src/platform/shards); absent: `redis` for every child. */
  redisOf?: (shard: string | undefined) => TsqRedis;
  /** Frees the locks of a dead child's poison pills (the lock plug-ins'); absent: they expire by their TTL. */
  releaseLocks?: (redis: TsqRedis, stored: Buffer[]) => Promise<unknown>;
}

/** The Redis a child works against: its shard's. */
export function childRedis(options: SupervisorOptions, plan: ChildPlan): TsqRedis {
  return options.redisOf?.(plan.shard) ?? options.redis;
}

export interface Child {
  worker: Worker;
  slot: Slot;
  identity: string | undefined;
  /** performance.now() at fork and when it reported ready (first heartbeat written). */
  forkedAt: number;
  readyAt: number | undefined;
  /** Why the supervisor itself is ending this child; undefined for an unexpected exit. */
  retiring: RestartReason | undefined;
  fatal: string | undefined;
  /** Where the child writes each fetched batch before its jobs start (describeBatch text). */
  batchFile: string | undefined;
  /** The latest batch reported over IPC instead, by a child that could not open its batch file. */
  lastBatch: string;
}

/** A child just forked into `slot`, not yet heard from. */
export function newChild(worker: Worker, slot: Slot, batchFile: string | undefined): Child {
  return {
    worker,
    slot,
    identity: undefined,
    forkedAt: performance.now(),
    readyAt: undefined,
    retiring: undefined,
    fatal: undefined,
    batchFile,
    lastBatch: "",
  };
}

/** Records what a child reported over IPC on its record; returns the message's type. */
export function noteFromChild(child: Child, message: FromChild): FromChild["type"] {
  switch (message.type) {
    case "identity":
      child.identity = message.identity;
      break;
    case "ready":
      child.identity = message.identity;
      child.readyAt = performance.now();
      child.slot.bootFailures = 0;
      break;
    case "fatal":
      child.fatal = message.message;
      break;
    case "started":
      child.lastBatch = message.batch;
      break;
  }
  return message.type;
}

export interface Slot {
  plan: ChildPlan;
  current: Child | undefined;
  backoffMs: number;
  bootFailures: number;
  restartTimer: NodeJS.Timeout | undefined;
}

/** Restart back-off in ms: 1 s doubling to 30 s; reset after 60 s of stable running. */
const BACKOFF_START = 1000;
const BACKOFF_MAX = 30_000;
const STABLE_MS = 60_000;

export function newSlot(plan: ChildPlan): Slot {
  return { plan, current: undefined, backoffMs: BACKOFF_START, bootFailures: 0, restartTimer: undefined };
}

/** ms before the slot's crashed child (up `uptimeMs`) is replaced; doubles the slot's next one. */
export function restartDelay(slot: Slot, uptimeMs: number): number {
  if (uptimeMs >= STABLE_MS) slot.backoffMs = BACKOFF_START;
  const delay = slot.backoffMs;
  slot.backoffMs = Math.min(slot.backoffMs * 2, BACKOFF_MAX);
  return delay;
}

/** What the health watch needs of a supervisor. */
export interface Fleet {
  readonly isStopping: boolean;
  /** Children that reported ready and are not being retired. */
  readyChildren(): Child[];
  /** Stops a child gracefully and forks its replacement. */
  retire(child: Child, reason: "hang" | "memory" | "abandoned"): void;
  /** The describeBatch text of the child's latest fetched batch. */
  lastBatchOf(child: Child): string;
}

/** Resolves true once `child` has written its first heartbeat, false if it exits or `ms` pass first. */
export function whenReady(child: Child, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const poll = setInterval(() => child.readyAt !== undefined && done(true), 50);
    const onExit = () => done(false);
    child.worker.once("exit", onExit);
    function done(ok: boolean): void {
      clearTimeout(timer);
      clearInterval(poll);
      child.worker.off("exit", onExit);
      resolve(ok);
    }
  });
}
