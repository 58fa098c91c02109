/**
 * Reading batches (Sidekiq Pro's `Batch::Status` and `BatchSet`): never writes, so `tsqctl` and the
 * admin API can look at a live batch without disturbing it.
 */
import { BATCHES, batchKey } from "../../../wire/keys.js";
import type { Redis } from "ioredis";

export interface BatchStatus {
  bid: string;
  description: string;
  parent: string | undefined;
  /** Jobs that ever joined (child batches are counted in `children`). */
  total: number;
  children: number;
  /** Members (jobs and child batches) that have not succeeded yet. */
  pending: number;
  /** Members whose last run failed (retrying or dead). */
  failures: number;
  /** Members that have not run once yet. */
  unrun: number;
  /** Dead members: jids, and `b:<bid>` for a child batch with dead jobs. */
  deadJids: string[];
  /** Up to TSQ_BATCH_FAIL_CAP failure records: jid -> { class, error_class, error_message }. */
  failureInfo: Record<string, unknown>;
  /** Epoch seconds (float); undefined until the event happens. */
  createdAt: number | undefined;
  completeAt: number | undefined;
  successAt: number | undefined;
  deathAt: number | undefined;
  settledAt: number | undefined;
  /** Epoch seconds when every key of the batch expires. */
  expiresAt: number | undefined;
  /** Every job ran at least once; `success`: every job succeeded. */
  complete: boolean;
  success: boolean;
}

/** The status of one batch, or undefined if it does not exist (expired, or a Sidekiq Pro bid). */
export async function batchStatus(redis: Redis, bid: string): Promise<BatchStatus | undefined> {
  const [hash, pending, failures, unrun, dead, failinfo] = (await redis
    .multi()
    .hgetall(batchKey(bid))
    .scard(batchKey(bid, "pending"))
    .scard(batchKey(bid, "failed"))
    .scard(batchKey(bid, "unrun"))
    .smembers(batchKey(bid, "dead"))
    .hgetall(batchKey(bid, "failinfo"))
    .exec()
    .then((rows) => (rows ?? []).map(([error, value]) => (error ? Promise.reject(error) : value)))) as [
    Record<string, string>,
    number,
    number,
    number,
    string[],
    Record<string, string>,
  ];
  if (Object.keys(hash).length === 0) return undefined;
  const time = (field: string) => (hash[field] === undefined ? undefined : Number(hash[field]));
  return {
    bid,
    description: hash.description ?? "",
    parent: hash.parent,
    total: Number(hash.total ?? 0),
    children: Number(hash.children ?? 0),
    pending,
    failures,
    unrun,
    deadJids: dead.sort(),
    failureInfo: Object.fromEntries(Object.entries(failinfo).map(([jid, json]) => [jid, parseJson(json)])),
    createdAt: time("created_at"),
    completeAt: time("complete_at"),
    successAt: time("success_at"),
    deathAt: time("death_at"),
    settledAt: time("settled_at"),
    expiresAt: time("expires_at"),
    complete: hash.complete_at !== undefined,
    success: hash.success_at !== undefined,
  };
}

/** Every live batch, newest expiry first (at most `limit`), each with its status. */
export async function listBatches(redis: Redis, limit = 100): Promise<BatchStatus[]> {
  const bids = await redis.zrevrangebyscore(BATCHES, "+inf", String(Date.now() / 1000), "LIMIT", 0, limit);
  const statuses = await Promise.all(bids.map((bid) => batchStatus(redis, bid)));
  return statuses.filter((s): s is BatchStatus => s !== undefined);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
