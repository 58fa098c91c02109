/**
 * Reliable push settings: `new Client({ reliablePush: { maxBuffered } })`, or for every client created
 * without the option (the default client, a worker's client) the environment variable
 * TSQ_RELIABLE_PUSH: "true"/"1" for the default bound, or the bound itself (jobs); "false"/"0"/unset: off.
 */
import { ConfigError } from "../../../wire/errors.js";

export interface ReliablePushOptions {
  /** Most jobs held in memory during an outage; one more throws PushBufferFullError. Default 10,000. */
  maxBuffered?: number;
  /** ms `close()` waits for the buffer to reach Redis before logging what is left. Default 10,000. */
  closeTimeoutMs?: number;
}

export interface ReliablePushSettings {
  readonly maxBuffered: number;
  readonly closeTimeoutMs: number;
}

export const RELIABLE_PUSH_DEFAULTS = {
  maxBuffered: 10_000,
  closeTimeoutMs: 10_000,
} as const satisfies ReliablePushSettings;

/** The settings to use, or undefined when reliable push is off. */
export function resolveReliablePush(
  option: ReliablePushOptions | boolean | undefined,
  env: string | undefined = process.env.TSQ_RELIABLE_PUSH,
): ReliablePushSettings | undefined {
  if (option === false) return undefined;
  if (option === undefined) return fromEnv(env);
  const given = option === true ? {} : option;
  const settings = { ...RELIABLE_PUSH_DEFAULTS, ...given };
  if (!Number.isInteger(settings.maxBuffered) || settings.maxBuffered < 1)
    throw new ConfigError(`reliablePush.maxBuffered must be a positive integer (jobs), got ${settings.maxBuffered}`);
  if (!(settings.closeTimeoutMs >= 0))
    throw new ConfigError(`reliablePush.closeTimeoutMs must be >= 0 (ms), got ${settings.closeTimeoutMs}`);
  return settings;
}

function fromEnv(env: string | undefined): ReliablePushSettings | undefined {
  const text = env?.trim().toLowerCase();
  if (text === undefined || text === "" || text === "false" || text === "0") return undefined;
  if (text === "true" || text === "1") return { ...RELIABLE_PUSH_DEFAULTS };
  const bound = Number(text);
  if (!Number.isInteger(bound) || bound < 2)
    throw new ConfigError(
      `TSQ_RELIABLE_PUSH must be true, false, or the most jobs to buffer (an integer), got "${env}"`,
    );
  return { ...RELIABLE_PUSH_DEFAULTS, maxBuffered: bound };
}
