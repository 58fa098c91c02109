/**
 * How long a push waits for a Redis that is not connected (the Client's `connectTimeout`, else
 * TSQ_CONNECT_TIMEOUT, else 10 s), checked once when the Client is built.
 */
import { ArgumentError } from "../wire/errors.js";

/** Largest `connectTimeout` (s): Node's timers hold at most 2^31-1 ms. */
const MAX_CONNECT_TIMEOUT = 2_147_483;

export function resolveConnectTimeout(value: number | undefined, env = process.env.TSQ_CONNECT_TIMEOUT): number {
  const source = value ?? (env === undefined || env === "" ? 10 : Number(env));
  const name = value === undefined ? `TSQ_CONNECT_TIMEOUT ("${env}")` : "connectTimeout";
  if (!Number.isFinite(source) || source < 0 || source > MAX_CONNECT_TIMEOUT)
    throw new ArgumentError(`${name} must be seconds from 0 to ${MAX_CONNECT_TIMEOUT} (0 = wait for Redis forever)`);
  return source;
}
