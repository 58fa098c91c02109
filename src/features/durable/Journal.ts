/**
 * A durable job's journal: what its steps returned, where it sleeps or waits, and whether it is done or
 * cancelled, in one hash per jid that outlives every retry and re-push of the job.
 *
 *   127.0.0.1:6379> HGETALL tsq:durable:3f9a0c1d2e4b5a6978c0d1e2
 *    1) "s:charge"          2) "0|v|{\"id\":\"ch_1\"}"      step 0 returned {"id":"ch_1"}
 *    3) "s:waitFor:ship:7"  4) "1|v|{\"carrier\":\"ups\"}"  step 1: the signal's data
 *    5) "s:sleep:1"         6) "2|u|1764621000"             step 2: sleeps until epoch second 1764621000
 *    7) "done"              8) "1764624600"                 finished (a re-run of the same jid does nothing)
 *
 * Entries are `<position>|<kind>|<json>` (kind v = value, u = sleep until, t = wait timed out), text that
 * Lua can write without a JSON encoder. The position is the step's place in the run: a name found at
 * another place than recorded means the code changed between deploys, and is refused (StepOrderError).
 *
 * One HGETALL when the run starts (in the plug-in's `around`), then nothing until a step records its
 * result: MULTI HSET + EXPIRE, one round trip.
 *
 * Lifetime: `ttlSeconds` after the last write, and past every time the job is due back: a sleep's wake
 * time (in the sleep's MULTI), a wait's deadline (in durable-park-5.lua), a retry's time (the plug-in's
 * keepLocksForRetry), each plus the TTL. The payload of a job that wrote its journal carries
 * `"durable_journal":1` (JOURNALED) wherever it goes next (schedule, retry), so a journal that is gone
 * anyway is refused (JournalLostError) instead of running every step again.
 */
import type { ChainableCommander } from "ioredis";
import { durableKey } from "../../wire/keys.js";
import type { JsonValue } from "../../wire/payload.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { JournalError, JournalLostError, StepOrderError } from "./errors.js";

/** Seconds a journal lives after its last write (a job's retries must fit in it: 25 retries take ~21 days
 * in Sidekiq, so a job that may retry that long should raise `static journalTtl`). */
export const JOURNAL_TTL = 7 * 24 * 60 * 60;

/** The payload field that says the job wrote its journal (the value is 1). */
export const JOURNALED = "durable_journal";

export type EntryKind = "v" | "u" | "t";

export interface Entry {
  position: number;
  kind: EntryKind;
  value: JsonValue | undefined;
}

export class Journal {
  readonly key: string;
  protected fields: Record<string, string> = {};
  /** position -> step name, as recorded. */
  protected readonly names = new Map<number, string>();
  private position = 0;
  private readonly used = new Set<string>();

  constructor(
    readonly redis: TsqRedis,
    readonly jid: string,
    readonly ttlSeconds: number = JOURNAL_TTL,
  ) {
    this.key = durableKey(jid);
  }

  /** Reads the journal; `journaled`: the payload says an earlier execution wrote it (it must be there). */
  async load(journaled = false): Promise<void> {
    this.fields = await this.redis.hgetall(this.key);
    if (journaled && Object.keys(this.fields).length === 0)
      throw new JournalLostError(
        `the journal ${this.key} of job ${this.jid} is gone (deleted, or expired: static journalTtl) although ` +
          "earlier executions recorded steps in it; running the job again would repeat every step, so it goes " +
          "to the dead set. To run it from its first step on purpose, push its class and arguments again as a new job.",
      );
    this.index();
  }

  /** Fills `names` from `fields`. */
  protected index(): void {
    for (const [field, text] of Object.entries(this.fields)) {
      if (!field.startsWith("s:")) continue;
      this.names.set(parseEntry(this.key, field, text).position, field.slice(2));
    }
  }

  get done(): boolean {
    return this.fields.done !== undefined;
  }

  get cancelled(): boolean {
    return this.fields.cancelled !== undefined;
  }

  /** Data a signal delivered to this job for `event` while it was parked. */
  delivered(event: string): string | undefined {
    return this.fields[`e:${event}`];
  }

  /**
   * Claims the next position for `name` and returns what was recorded for it, if anything. Throws
   * StepOrderError when the name was used already in this run, or the journal has it (or another name)
   * at a different position.
   */
  next(name: string): { position: number; entry: Entry | undefined } {
    if (this.used.has(name)) {
      throw new StepOrderError(
        `step "${name}" ran twice in one execution of job ${this.jid}: step names must be unique within a job ` +
          "(give the second one another name)",
      );
    }
    this.used.add(name);
    const position = this.position++;
    const text = this.fields[`s:${name}`];
    const entry = text === undefined ? undefined : parseEntry(this.key, `s:${name}`, text);
    const recordedHere = this.names.get(position);
    if ((entry && entry.position !== position) || (!entry && recordedHere !== undefined)) {
      const was = entry ? `was step #${entry.position + 1}` : "was not recorded";
      throw new StepOrderError(
        `the steps of job ${this.jid} changed since it started: "${name}" is step #${position + 1} now but ${was}` +
          (recordedHere !== undefined && recordedHere !== name
            ? ` (step #${position + 1} was "${recordedHere}")`
            : "") +
          `. A job already under way must finish on the code it started with: deploy step changes as a new ` +
          `job class (or a new step name at the end), or delete ${this.key} to start it over.`,
      );
    }
    return { position, entry };
  }

  /**
   * Records an entry (plus the caller's commands in `tx`, atomically): one round trip. `dueAt` (epoch s):
   * the job is due back then (a sleep), so the journal lives until then plus its TTL.
   */
  async record(
    name: string,
    position: number,
    kind: EntryKind,
    value: JsonValue | undefined,
    tx?: ChainableCommander,
    dueAt?: number,
  ): Promise<void> {
    const multi = tx ?? this.redis.multi();
    const text = entryText(position, kind, value);
    multi.hset(this.key, `s:${name}`, text).expire(this.key, this.lifetime(dueAt));
    const results = await multi.exec();
    for (const [error] of results ?? []) if (error) throw error;
    this.fields[`s:${name}`] = text;
    this.names.set(position, name);
  }

  /** Seconds the journal must live from now: its TTL, past `dueAt` (epoch s) when the job is due back then. */
  lifetime(dueAt?: number): number {
    const wait = dueAt === undefined ? 0 : Math.ceil(dueAt - Date.now() / 1000);
    return this.ttlSeconds + Math.max(0, wait);
  }

  /** The job finished: a later run of the same jid (a duplicate, a recovery) does nothing. */
  async finish(): Promise<void> {
    await this.redis
      .multi()
      .hset(this.key, "done", Math.floor(Date.now() / 1000))
      .expire(this.key, this.ttlSeconds)
      .exec();
  }
}

export function entryText(position: number, kind: EntryKind, value: JsonValue | undefined): string {
  return `${position}|${kind}|${value === undefined ? "" : JSON.stringify(value)}`;
}

export function parseEntry(key: string, field: string, text: string): Entry {
  const match = /^(\d+)\|([vut])\|/.exec(text);
  if (!match) throw journalError(key, field, text, 'is not "<position>|<kind>|<json>"');
  const json = text.slice(match[0].length);
  let value: JsonValue | undefined;
  try {
    value = json === "" ? undefined : (JSON.parse(json) as JsonValue);
  } catch (error) {
    throw journalError(key, field, text, `holds text that is not JSON (${(error as Error).message})`);
  }
  return { position: Number(match[1]), kind: match[2] as EntryKind, value };
}

function journalError(key: string, field: string, text: string, problem: string): JournalError {
  const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  return new JournalError(
    `field "${field}" of ${key} ${problem}: ${JSON.stringify(shown)}. Fix or delete the field (HDEL ${key} ` +
      `${field}: the step then runs again), then retry the job from the dead set.`,
  );
}
