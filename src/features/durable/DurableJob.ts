/**
 * Durable jobs: steps that run once per job, sleeps and waits that free the worker slot, on Sidekiq's
 * wire (a Ruby process sees ordinary jobs in `schedule` and the queues).
 *
 *   class OrderJob extends DurableJob {
 *     async perform(orderId: string) {
 *       const charge = await this.step("charge", () => payments.charge(orderId));
 *       const shipment = await this.waitFor(`shipped:${orderId}`, { timeout: 7 * 86400 });
 *       await this.sleep(3600);
 *       await this.step("email", () => mail.sendDelivered(orderId, charge.id, shipment));
 *     }
 *   }
 *
 * Each execution runs perform from the top; a step already in the journal (Journal.ts) returns its
 * recorded result without calling its function. sleep() and waitFor() record themselves as steps, put
 * the same payload (same jid) in `schedule`, and end the execution with `Suspended`, which the plug-in
 * turns into a `suspended` end (not the job's end): the slot is free, and only Redis holds the job. Code
 * outside steps runs again on every execution, so it must be deterministic (the same steps in the same
 * order) and cheap. Once `this.signal` is aborted (a cancel, a timeout), no step, sleep or wait starts:
 * each throws the abort's reason, so a job that ignores its signal still stops at its next step.
 */
import type { ChainableCommander } from "ioredis";
import { Job } from "../../client/Job.js";
import { defaultClient } from "../../client/defaultClient.js";
import { ArgumentError } from "../../wire/errors.js";
import { checkDuration } from "../../platform/util/longTimer.js";
import { DURABLE_SLEEPING_INDEX, SCHEDULE } from "../../wire/keys.js";
import type { JsonValue } from "../../wire/payload.js";
import { Journal, JOURNAL_TTL, JOURNALED, parseEntry } from "./Journal.js";
import { park } from "./parking.js";
import { activeDiversion, MemoryJournal } from "./memory.js";
import {
  JobCancelledError,
  JournalError,
  JournalLostError,
  StepOrderError,
  Suspended,
  EventTimeoutError,
} from "./errors.js";

/** What a step's function is given. */
export interface StepContext {
  /** `<jid>:<step name>`: stable across re-runs, for a remote API's idempotency key. */
  readonly idempotencyKey: string;
  /** Redis commands queued here commit in the same MULTI as the step's result: exactly once with it. */
  readonly tx: ChainableCommander;
}

export interface WaitForOptions {
  /** Seconds to wait before waitFor throws EventTimeoutError (required: a wait without end is a leak). */
  timeout: number;
  /** The step's name; default `waitFor:<event>`. */
  name?: string;
}

/** Where the plug-in leaves the journal it loaded (a symbol: not part of a job's own namespace). */
export const JOURNAL = Symbol("tsq.durable.journal");

export abstract class DurableJob extends Job {
  /** Seconds the journal lives after its last write; must outlast the job's retries and sleeps. */
  static journalTtl = JOURNAL_TTL;

  /** A journal that does not match the code (or cannot be read) will not match better later: dead set. */
  static retryIn(_count: number, error: Error): unknown {
    return error instanceof StepOrderError || error instanceof JournalError || error instanceof JournalLostError
      ? "kill"
      : undefined;
  }

  private sleeps = 0;
  [JOURNAL]?: Journal;

  /**
   * Runs `fn` once per job and returns its result (through JSON, so the first run and a replay return the
   * same value). A step whose function throws records nothing: the job fails and retries as usual, and
   * the retry calls the function again. A process killed after the function's side effect but before
   * its result is recorded calls it again on the re-run: use `ctx.tx` (Redis) or `ctx.idempotencyKey`
   * (a remote API) to make that side effect exactly-once.
   */
  async step<T>(name: string, fn: (ctx: StepContext) => T | Promise<T>): Promise<T> {
    checkName(name);
    this.signal.throwIfAborted();
    const journal = await this.journal();
    const { position, entry } = journal.next(name);
    if (entry) return entry.value as T;
    const tx = journal.redis.multi();
    const result = await fn({ idempotencyKey: `${this.jid}:${name}`, tx });
    const value = result === undefined ? undefined : (JSON.parse(JSON.stringify(result)) as JsonValue);
    await journal.record(name, position, "v", value, tx);
    this.markJournaled();
    return value as T;
  }

  /** Ends this execution and runs the job again in `seconds`, skipping the steps done. */
  sleep(seconds: number): Promise<void> {
    checkDuration(seconds, { what: "sleep(seconds)", zero: true });
    return this.sleepUntilMs(Date.now() + seconds * 1000, `sleep:${++this.sleeps}`);
  }

  /** As sleep(), until `date` (a Date or epoch milliseconds). */
  sleepUntil(date: Date | number, name?: string): Promise<void> {
    const ms = typeof date === "number" ? date : date.getTime();
    if (!Number.isFinite(ms)) throw new ArgumentError(`sleepUntil(date) needs a valid Date, got ${String(date)}`);
    return this.sleepUntilMs(ms, name ?? `sleep:${++this.sleeps}`);
  }

  /**
   * Parks the job (no slot held) until `signal(event, data)` is sent from any process, and returns the
   * data; throws EventTimeoutError after `timeout` seconds. A signal sent before the wait starts is kept
   * (7 days by default) and returned at once.
   */
  async waitFor<T = JsonValue>(event: string, options: WaitForOptions): Promise<T> {
    checkEvent(event);
    const timeout = checkDuration(options?.timeout, { what: `waitFor("${event}", { timeout })`, zero: true });
    const name = options.name ?? `waitFor:${event}`;
    checkName(name);
    this.signal.throwIfAborted();
    const journal = await this.journal();
    const { position, entry } = journal.next(name);
    if (entry) return this.waited(event, entry.kind, entry.value) as T;
    if (journal instanceof MemoryJournal) return this.waitInMemory<T>(journal, event, { name, position, timeout });
    const now = Date.now() / 1000;
    const deadlineSeconds = Math.ceil(now + timeout);
    const parked = await park(journal.redis, {
      jid: this.jid,
      event,
      stepName: name,
      position,
      payload: this.journaledPayload(),
      deadlineSeconds,
      nowSeconds: now,
      journalTtlSeconds: journal.ttlSeconds,
    });
    this.markJournaled();
    if (parked.status === "parked") throw new Suspended("parked", deadlineSeconds);
    if (parked.status === "cancelled") throw new JobCancelledError(this.jid);
    if (parked.status === "timeout") return this.waited(event, "t", undefined) as T;
    return parseEntry(journal.key, `s:${name}`, `${position}|v|${parked.data}`).value as T;
  }

  /** waitFor in tsq/testing's fake and inline modes (memory.ts). */
  private async waitInMemory<T>(
    journal: MemoryJournal,
    event: string,
    step: { name: string; position: number; timeout: number },
  ): Promise<T> {
    const reply = await journal.wait(event, step, { json: JSON.stringify(this.payload), klass: this.constructor });
    if (reply === "parked") throw new Suspended("parked", Math.ceil(Date.now() / 1000 + step.timeout));
    if (reply === "timeout") return this.waited(event, "t", undefined) as T;
    return JSON.parse(reply.data) as T;
  }

  private waited(event: string, kind: string, value: JsonValue | undefined): JsonValue | undefined {
    if (kind === "t")
      throw new EventTimeoutError(event, `no signal for "${event}" came before the wait's timeout (job ${this.jid})`);
    return value;
  }

  private async sleepUntilMs(untilMs: number, name: string): Promise<void> {
    checkName(name);
    this.signal.throwIfAborted();
    const journal = await this.journal();
    const { position, entry } = journal.next(name);
    const until = entry ? Number(entry.value) : Math.ceil(untilMs / 1000);
    // In a test mode (a journal in memory) a sleep ends at once.
    if (Date.now() / 1000 >= until || journal instanceof MemoryJournal) {
      if (!entry) await journal.record(name, position, "u", until);
      this.markJournaled();
      return;
    }
    // The record and the re-push in one MULTI: never one without the other. The index entry (for the
    // tsq_durable_sleeping gauge) goes stale at `until`; older ones are pruned here, so it stays bounded.
    // The journal lives until the wake time plus its TTL, in the same MULTI.
    const tx = journal.redis
      .multi()
      .zadd(SCHEDULE, until, this.journaledPayload())
      .zremrangebyscore(DURABLE_SLEEPING_INDEX, "-inf", `(${Math.floor(Date.now() / 1000)}`)
      .zadd(DURABLE_SLEEPING_INDEX, until, this.jid);
    if (entry) {
      const results = await tx.expire(journal.key, journal.lifetime(until)).exec();
      for (const [error] of results ?? []) if (error) throw error;
    } else {
      await journal.record(name, position, "u", until, tx, until);
    }
    this.markJournaled();
    throw new Suspended("sleeping", until);
  }

  /** The journal the plug-in loaded for this run, or one loaded now (the job runs without the plug-in). */
  private async journal(): Promise<Journal> {
    if (!this.jid) throw new ArgumentError("a durable job needs a jid: run it through a worker or set `jid` first");
    if (!this[JOURNAL]) {
      const client = defaultClient();
      const ttl = (this.constructor as typeof DurableJob).journalTtl;
      // tsq/testing's fake and inline modes take the default client's pushes: the journal is in memory.
      const diversion = activeDiversion(client);
      const journal = diversion
        ? new MemoryJournal(diversion, this.jid, ttl)
        : new Journal(client.redis, this.jid, ttl);
      await journal.load(journaled(this.payload));
      this[JOURNAL] = journal;
    }
    return this[JOURNAL];
  }

  /**
   * The journal was written: the payload says so from now on, so every copy pushed later (a retry's) and
   * the one written with the write (journaledPayload) carry it, and a lost journal is refused (Journal#load).
   * Set only after a write succeeded: a first step that throws leaves no mark and no journal.
   */
  private markJournaled(): void {
    if (this.payload && this.payload[JOURNALED] !== 1) this.payload[JOURNALED] = 1;
  }

  /** The payload text a sleep or a wait puts in `schedule`, marked, in the same atomic write as its journal entry. */
  private journaledPayload(): string {
    const payload: Record<string, unknown> = this.payload ?? {};
    return JSON.stringify(payload[JOURNALED] === 1 ? payload : { ...payload, [JOURNALED]: 1 });
  }
}

/** The payload carries the mark of a journal written by an earlier execution (text from Redis: exactly 1). */
export function journaled(payload: { [field: string]: unknown } | undefined): boolean {
  return payload?.[JOURNALED] === 1;
}

function checkName(name: string): void {
  if (typeof name !== "string" || name === "" || name.length > 200)
    throw new ArgumentError(`a step needs a name of 1 to 200 characters, got ${JSON.stringify(name)}`);
}

function checkEvent(event: string): void {
  if (typeof event !== "string" || event === "" || event.length > 500)
    throw new ArgumentError(`an event needs a name of 1 to 500 characters, got ${JSON.stringify(event)}`);
}
