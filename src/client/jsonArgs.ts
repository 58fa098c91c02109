/**
 * `perform`'s parameter types, checked at compile time for what survives the JSON round trip through
 * Redis: the compile-time twin of strictArgs.ts. A parameter that cannot survive it (a Date, a Map, a
 * function, an object with methods, `undefined`) turns into a message type, so the push fails to
 * compile with the reason in the error:
 *
 *   class ReportJob extends Job { perform(when: Date) {} }
 *   ReportJob.performAsync(new Date());
 *   // Argument of type 'Date' is not assignable to parameter of type
 *   //   '"tsq: a Date is not JSON; pass date.toISOString() or epoch seconds"'.
 *
 * Optional parameters and optional properties are fine (left out, they are not in the JSON); `unknown`
 * and `any` are left to the run-time check. What types cannot see: a class instance with data fields
 * only is a plain object to TypeScript; strict args still refuse it at run time.
 */

import type { JsonValue } from "../wire/payload.js";

/** The reason a type is refused, as the compiler will print it. */
type Refused<Why extends string> = `tsq: ${Why}`;

type IsAny<T> = 0 extends 1 & T ? true : false;

/** The keys of `T` whose values are functions (methods): their presence means a class instance. */
type MethodKeys<T> = { [K in keyof T]-?: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];

/** `T` if it survives JSON unchanged, else a Refused message (element by element, property by property). */
export type JsonSafe<T> =
  IsAny<T> extends true
    ? T
    : unknown extends T
      ? T
      : [T] extends [JsonValue]
        ? T // already JSON (and a recursive type such as JsonValue is not unfolded forever)
        : JsonSafeMember<T>;

// Distributes over unions: `string | Date` refuses only the Date.
type JsonSafeMember<T> = T extends string | boolean | null
  ? T
  : T extends number
    ? T // NaN and Infinity are numbers to TypeScript: strict args refuse them at run time.
    : T extends undefined
      ? Refused<"undefined is not JSON; leave the argument out or pass null">
      : T extends bigint
        ? Refused<"a bigint is not JSON; pass it as a string">
        : T extends symbol
          ? Refused<"a symbol is not JSON">
          : T extends (...args: never[]) => unknown
            ? Refused<"a function is not JSON; pass data, and look the function up in perform">
            : T extends Date
              ? Refused<"a Date is not JSON; pass date.toISOString() or epoch seconds">
              : T extends ReadonlyMap<unknown, unknown>
                ? Refused<"a Map is not JSON; pass Object.fromEntries(map)">
                : T extends ReadonlySet<unknown>
                  ? Refused<"a Set is not JSON; pass an array">
                  : T extends RegExp
                    ? Refused<"a RegExp is not JSON; pass its source text">
                    : T extends ArrayBuffer | ArrayBufferView
                      ? Refused<"binary data is not JSON; pass base64 text">
                      : T extends Promise<unknown>
                        ? Refused<"a Promise is not JSON; await it first">
                        : T extends readonly unknown[]
                          ? { [K in keyof T]: JsonSafe<T[K]> }
                          : T extends object
                            ? [MethodKeys<T>] extends [never]
                              ? JsonSafeObject<T>
                              : Refused<`an object with methods (${MethodKeys<T> & string}) is not JSON; pass a plain object`>
                            : T;

/** Optional properties may be left out; a required one must be JSON itself. */
type JsonSafeObject<T> = {
  [K in keyof T]: K extends symbol
    ? Refused<"a symbol key is not JSON">
    : object extends Pick<T, K>
      ? JsonSafe<Exclude<T[K], undefined>>
      : JsonSafe<T[K]>;
};

/** A parameter list checked element by element; optional parameters stay optional. */
export type JsonSafeArgs<A extends readonly unknown[]> = {
  [K in keyof A]: object extends Pick<A, K> ? JsonSafe<Exclude<A[K], undefined>> : JsonSafe<A[K]>;
};
