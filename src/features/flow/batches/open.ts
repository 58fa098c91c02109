/**
 * The one typed call of batch-open-1.lua: named arguments, the keys built here from keys.ts. A `jobs`
 * block calls it before its first push (Batch#open).
 */
import { BATCHES, BATCH_PREFIX } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { nowSeconds } from "../../../wire/timestamps.js";
import { tagged } from "../../../platform/redis/clusterConnection.js";
import { batchOpenLua } from "./scripts.js";

export interface OpenBatchCall {
  bid: string;
  /** "create": a new Batch (or its deterministic bid again); "reopen": a batch job's `this.batch`. */
  mode: "create" | "reopen";
  /** Seconds an unfinished batch's keys live after its last open. */
  expiresInSeconds: number;
  /** The block's token, holding the batch open until its "seal"; "" for none. */
  token: string;
  /** The parent batch's bid; "" for none. */
  parentBid: string;
  /** A new batch's hash fields, name then value (description, linger, cb:<event>, ...). */
  fields: string[];
}

/** 1 created, 2 reopened; rejects with NOBATCH, FINISHED, NOPARENT or PARENTFINISHED (refusal.ts). */
export async function openBatch(redis: TsqRedis, call: OpenBatchCall): Promise<number> {
  return batchOpenLua.run(
    redis,
    BATCHES,
    tagged(redis, BATCH_PREFIX),
    call.bid,
    String(nowSeconds()),
    String(call.expiresInSeconds),
    call.mode,
    call.token,
    call.parentBid,
    ...call.fields,
  );
}
