/** The batches' Lua: opening a batch, joining members to it, applying a member's event. */
import { luaScript } from "../../../platform/redis/luaScript.js";

/** batch-open-1.lua: creates or reopens a batch for a `jobs` block; 1 created, 2 reopened. */
export const batchOpenLua = luaScript<
  [
    index: string,
    prefix: string,
    bid: string,
    now: string,
    expiresIn: string,
    mode: "create" | "reopen",
    token: string,
    parent: string,
    ...fields: string[],
  ],
  number
>(new URL("./batch-open-1.lua", import.meta.url));

/** batch-join-3.lua: makes `jids` members of the batch (its hash, pending and unrun keys); its new total. */
export const batchJoinLua = luaScript<[batchHash: string, pending: string, unrun: string, ...jids: string[]], number>(
  new URL("./batch-join-3.lua", import.meta.url),
);

/** batch-event-1.lua: applies a member's event, fires due callbacks; [bid, event, ...] fired. */
export const batchEventLua = luaScript<
  [
    index: string,
    prefix: string,
    queuePrefix: string,
    queues: string,
    now: string,
    enqueuedAt: string,
    failCap: string,
    op: string,
    bid: string,
    member: string,
    info: string,
  ],
  string[]
>(new URL("./batch-event-1.lua", import.meta.url));

/** Every script of the feature, for its plug-in's `scripts`. */
export const BATCH_SCRIPTS = [batchOpenLua, batchJoinLua, batchEventLua] as const;
