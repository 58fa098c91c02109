/**
 * The shape checks of `Client#pushBulk`, made before any job is built, so a bad call pushes nothing.
 */
import { ArgumentError } from "../wire/errors.js";
import type { BulkItem } from "./options.js";

/** Jobs per round trip: `batchSize`, else 1,000 (immediate) or 100 (scheduled, each a ZADD). */
export function bulkSliceSize(item: BulkItem): number {
  const { args, at, batchSize, jid } = item;
  if (!Array.isArray(args) || !args.every(Array.isArray)) {
    throw new ArgumentError("pushBulk: args must be an array of argument arrays, e.g. [[1], [2]]");
  }
  if (Array.isArray(at) && at.length !== args.length) {
    throw new ArgumentError(`pushBulk: at has ${at.length} times for ${args.length} jobs; give one per job`);
  }
  if (jid !== undefined && args.length > 1) {
    throw new ArgumentError("pushBulk: an explicit jid cannot be shared by several jobs; drop `jid`");
  }
  const size = batchSize ?? (at === undefined ? 1000 : 100);
  if (!Number.isInteger(size) || size < 1)
    throw new ArgumentError(`pushBulk: batchSize must be a positive integer, got ${size}`);
  return size;
}
