/**
 * What `buildEnumerator` returns, and two ready-made ones (Sidekiq's `array_enumerator` and a counter).
 *
 * An enumerator yields `[item, cursor]` pairs. The cursor given with an item is the place to resume
 * from *to process that item next*: `buildEnumerator(args, cursor)` called with it must yield that item
 * first. The job saves it before the item runs, so a graceful stop repeats nothing and a crash repeats
 * only the items since the last save (Sidekiq's meaning, so a cursor reads the same in its Web UI).
 */
import { ArgumentError } from "../../wire/errors.js";
import { IterationStateError } from "./errors.js";
import type { JsonValue } from "../../wire/payload.js";

/** One step: the item to process and the cursor that resumes at it. */
export type Step<Item, Cursor extends JsonValue> = readonly [item: Item, cursor: Cursor];

/** A sync or async iterable of steps: an array, a generator, an `async function*`. */
export type Enumerator<Item, Cursor extends JsonValue> =
  AsyncIterable<Step<Item, Cursor>> | Iterable<Step<Item, Cursor>>;

export function isEnumerator(value: unknown): value is Enumerator<unknown, JsonValue> {
  if (value === null || typeof value !== "object") return false;
  const candidate = value as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown };
  return typeof candidate[Symbol.asyncIterator] === "function" || typeof candidate[Symbol.iterator] === "function";
}

/** Integers from `start` (inclusive) to `end` (exclusive); each is its own cursor. */
export function* rangeEnumerator(start: number, end: number, cursor: JsonValue): Generator<Step<number, number>> {
  const from = cursor === null ? start : wholeCursor(cursor);
  for (let i = Math.max(from, start); i < end; i++) yield [i, i];
}

/** The elements of `array` with their index as the cursor, as Sidekiq's `array_enumerator`. */
export function* arrayEnumerator<T>(array: readonly T[], cursor: JsonValue): Generator<Step<T, number>> {
  if (!Array.isArray(array)) throw new ArgumentError("arrayEnumerator needs an array");
  for (let i = cursor === null ? 0 : wholeCursor(cursor); i < array.length; i++) yield [array[i] as T, i];
}

function wholeCursor(cursor: JsonValue): number {
  if (typeof cursor !== "number" || !Number.isSafeInteger(cursor) || cursor < 0) {
    throw new IterationStateError(
      `the saved cursor ${JSON.stringify(cursor)?.slice(0, 100)} is not a whole number, so the job cannot resume ` +
        "from it and was not retried. Fix field c of its it-<jid> hash (or delete it to start over), then retry " +
        "the job from the dead set.",
    );
  }
  return cursor;
}
