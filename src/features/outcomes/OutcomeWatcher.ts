/**
 * OutcomeWatcher: one blocking reader of the `tsq:outcomes` stream shared by any number of waits and
 * subscribers, so a thousand `wait`s cost one connection and one XREAD at a time, not a poll each.
 *
 * The race that loses an end which happened before the wait began is closed by the order of steps:
 *
 *   1. the reader takes its position P (the stream's last id, XREVRANGE + - COUNT 1) before any wait
 *      registers, and then reads every entry after P in order;
 *   2. a wait registers its jid, THEN reads `tsq:result:<jid>`.
 *
 * The key and its stream entry are written by one script. An end whose entry the reader had already read
 * when the wait registered was written before the GET was sent, so the GET sees it; an end whose entry
 * comes later is handed to the registered wait. Either way it is seen, and nothing polls.
 *
 * A wait for the final end (`final: true`) takes a `failed` record as "not yet": OutcomeRecorder writes
 * `failed` only for an attempt that was retried. The next attempt rewrites the key and adds its entry,
 * so the same two steps see it, whether it ended before the wait began or after.
 *
 * The stream is capped (~10,000 entries): a reader that falls further behind than that (a full read),
 * or that lost its connection, re-reads the keys of every pending wait, so a trimmed event costs a GET,
 * never a hang.
 *
 * The watcher's two connections (one for GETs, one blocked in XREAD), both its own, are open only while
 * a wait or a subscriber is pending: when the last one ends they close, and the next wait opens them
 * again (taking a new position P). So a script that awaited one job can exit, and the Client's own
 * connection (the default client's, made lazily) is never used here.
 */
import type { Redis } from "ioredis";
import { OUTCOMES, resultKey } from "../../wire/keys.js";
import { ArgumentError } from "../../wire/errors.js";
import { sleep } from "../../platform/util/sleep.js";
import { checkDuration, longTimeout } from "../../platform/util/longTimer.js";
import { defaultClient } from "../../client/defaultClient.js";
import type { Client } from "../../client/Client.js";
import { WaitTimeoutError } from "./errors.js";
import { entriesOf, parseEvent, parseProgressEvent, parseRecord } from "./record.js";
import type { JobResult, OutcomeEvent, ProgressEvent } from "./record.js";

/** Entries per XREAD. */
const READ_COUNT = 1000;
/** Milliseconds an XREAD blocks before it is sent again (a bound on how long close() can take to be noticed). */
const BLOCK_MS = 2000;
/** Milliseconds to wait before reading again after an error (Redis away). */
const RETRY_MS = 1000;
/** Keys per MGET when re-reading the pending waits. */
const MGET_CHUNK = 500;

export interface WatcherOptions {
  /** The Client whose Redis holds the outcomes (default: the default client). */
  client?: Client;
}

export interface WaitOptions {
  /** Seconds to wait at most (across every attempt when `final`); then the promise rejects with WaitTimeoutError. */
  timeout: number;
  /**
   * Wait for the job's final end: `done`, `dead` (retries exhausted, `retry: false`, discarded) or `cancelled`,
   * skipping the `failed` of each attempt that was retried (BullMQ's `job.waitUntilFinished` always
   * does: its events announce a retried attempt as "delayed", not "failed"). Default false: the first
   * end, a retried attempt's `failed` included.
   */
  final?: boolean;
}

/** Which events a subscriber gets: all of the named classes and/or queues (none named: every event). */
export interface OutcomeFilter {
  class?: string | readonly string[];
  queue?: string | readonly string[];
  /** Also the progress reports of opted-in jobs (`status: "progress"`), each before its job's end. Default false. */
  progress?: boolean;
}

type Listener = (event: OutcomeEvent | undefined) => void;
type StreamEvent = OutcomeEvent | ProgressEvent;

/** The connections of a watcher with waits or subscribers pending, and its read loop. */
interface Session {
  /** GET, MGET and the first XREVRANGE. */
  readonly commands: Redis;
  /** Blocked in XREAD. */
  readonly reader: Redis;
  readonly stop: AbortController;
  /** Settles once the position is taken and the loop runs. */
  ready: Promise<void>;
  loop: Promise<void> | undefined;
}

export class OutcomeWatcher {
  /** The Client's connection, whose settings the watcher's own connections copy; never used itself. */
  private readonly source: Redis;
  private session: Session | undefined;
  private position = "0-0";
  private readonly waits = new Map<string, Set<Listener>>();
  private readonly subscribers = new Set<{
    match: (event: StreamEvent) => boolean;
    callback: (e: StreamEvent) => void;
  }>();
  /** Waits past their checks whose registration has not happened yet: the session must stay for them. */
  private registering = 0;
  private closed = false;

  constructor(options: WatcherOptions = {}) {
    this.source = (options.client ?? defaultClient()).redis;
  }

  /**
   * The job's last recorded end (its final one with `final: true`); resolves at once if it ended before
   * the call. Takes what `performAsync` resolves to: null (the push was dropped) is refused by name.
   */
  async wait(jid: string | null, options: WaitOptions): Promise<JobResult> {
    if (jid === null)
      throw new ArgumentError(
        "waitUntilFinished(jid): jid is null, so no job was pushed (a unique lock or a client middleware dropped it); there is nothing to wait for",
      );
    if (typeof jid !== "string" || jid === "")
      throw new ArgumentError("waitUntilFinished(jid): jid must be a non-empty string");
    const timeout = checkDuration(options?.timeout, { what: "waitUntilFinished(jid, { timeout })" });
    const final = options.final ?? false;
    if (typeof final !== "boolean")
      throw new ArgumentError("waitUntilFinished(jid, { final }): final must be true or false");
    this.registering++;
    try {
      await this.start();
    } finally {
      this.registering--;
    }
    return new Promise<JobResult>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: JobResult | Error): void => {
        if (settled) return;
        settled = true;
        cancelTimer();
        this.unregister(jid, listener);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      // A retried attempt's end ("failed") is skipped when waiting for the final one: the key is
      // rewritten by the next attempt's end, whose event then calls `lookup` again.
      let retryPending = false;
      const accept = (outcome: JobResult): void => {
        if (final && outcome.status === "failed") retryPending = true;
        else finish(outcome);
      };
      const lookup = (event?: OutcomeEvent): void => {
        // No session: the watcher was closed under this wait, which ends on its timeout.
        this.session?.commands.get(resultKey(jid)).then((text) => {
          const stored = parseRecord(text);
          if (stored) accept(stored);
          else if (event) accept(event.error ? { status: event.status, error: event.error } : { status: event.status });
        }, finish);
      };
      const listener: Listener = (event) => lookup(event);
      // Chained past setTimeout's 24.8 days: a wait of a month rejects after a month, not at once.
      const cancelTimer = longTimeout(timeout * 1000, () => finish(new WaitTimeoutError(jid, timeout, retryPending)));
      // Registered before the key is read (see the header): an end after this point reaches `listener`.
      let set = this.waits.get(jid);
      if (!set) this.waits.set(jid, (set = new Set()));
      set.add(listener);
      lookup();
    });
  }

  /**
   * Calls `callback` for each later end matching `filter` (and each progress report with `progress: true`),
   * in the stream's order; returns the function that unsubscribes.
   */
  subscribe(filter: OutcomeFilter & { progress: true }, callback: (event: StreamEvent) => void): () => void;
  subscribe(filter: OutcomeFilter, callback: (event: OutcomeEvent) => void): () => void;
  subscribe(filter: OutcomeFilter, callback: ((event: OutcomeEvent) => void) | ((event: StreamEvent) => void)) {
    const classes = filter.class === undefined ? undefined : new Set([filter.class].flat());
    const queues = filter.queue === undefined ? undefined : new Set([filter.queue].flat());
    const progress = filter.progress ?? false;
    if (typeof progress !== "boolean")
      throw new ArgumentError("subscribe({ progress }): progress must be true or false");
    const match = (event: StreamEvent) =>
      (progress || event.status !== "progress") &&
      (!classes || classes.has(event.class)) &&
      (!queues || queues.has(event.queue));
    // Without `progress` the match passes ends only, so the narrower callback gets what it takes.
    const entry = { match, callback: callback as (event: StreamEvent) => void };
    this.subscribers.add(entry);
    void this.start().catch(() => undefined); // errors are retried inside the loop
    return () => {
      this.subscribers.delete(entry);
      this.closeIfIdle();
    };
  }

  /**
   * Ends the reader and closes the watcher's connections for good (a later wait rejects); pending waits
   * keep their timers (they reject on timeout).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.endSession();
  }

  private start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("OutcomeWatcher: closed; make a new one to wait again"));
    this.session ??= this.open();
    return this.session.ready;
  }

  private open(): Session {
    // Connected now (the source may be a lazy client's), queueing what is sent before the connection is
    // up (a client with reliable push fails commands while offline); errors surface on the commands.
    const settings = { lazyConnect: false, enableOfflineQueue: true, autoResendUnfulfilledCommands: true };
    const commands = this.source.duplicate(settings);
    const reader = this.source.duplicate({ ...settings, enableAutoPipelining: false });
    for (const connection of [commands, reader]) connection.on("error", () => undefined);
    const session: Session = {
      commands,
      reader,
      stop: new AbortController(),
      ready: Promise.resolve(),
      loop: undefined,
    };
    session.ready = (async () => {
      const last = (await commands.xrevrange(OUTCOMES, "+", "-", "COUNT", 1))[0];
      if (session.stop.signal.aborted) return;
      this.position = last?.[0] ?? "0-0";
      session.loop = this.run(session);
    })();
    // A session that could not start is dropped, so the next wait tries a new one.
    session.ready.catch(() => {
      if (this.session === session) void this.endSession();
    });
    return session;
  }

  /** No wait and no subscriber left: the connections close, so they hold neither Redis nor the process. */
  private closeIfIdle(): void {
    if (this.waits.size === 0 && this.subscribers.size === 0 && this.registering === 0) void this.endSession();
  }

  private async endSession(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    session.stop.abort();
    session.reader.disconnect();
    session.commands.disconnect();
    await session.loop;
  }

  private unregister(jid: string, listener: Listener): void {
    const set = this.waits.get(jid);
    set?.delete(listener);
    if (set?.size === 0) this.waits.delete(jid);
    this.closeIfIdle();
  }

  private async run(session: Session): Promise<void> {
    const { reader, stop } = session;
    const signal = stop.signal;
    while (!signal.aborted) {
      try {
        const reply = (await reader.xread(
          "COUNT",
          READ_COUNT,
          "BLOCK",
          BLOCK_MS,
          "STREAMS",
          OUTCOMES,
          this.position,
        )) as unknown;
        const entries = entriesOf(reply);
        for (const entry of entries) this.dispatch(entry);
        if (entries.length >= READ_COUNT) this.recheck();
      } catch {
        if (signal.aborted) return;
        await sleep(RETRY_MS, signal);
        if (!signal.aborted) this.recheck();
      }
    }
  }

  private dispatch(entry: unknown): void {
    if (Array.isArray(entry) && typeof entry[0] === "string") this.position = entry[0];
    const event = parseEvent(entry) ?? parseProgressEvent(entry);
    if (!event) return;
    if (event.status !== "progress") for (const listener of [...(this.waits.get(event.jid) ?? [])]) listener(event);
    for (const subscriber of this.subscribers) if (subscriber.match(event)) subscriber.callback(event);
  }

  /** Events may have been trimmed away or missed: every pending wait looks at its key again. */
  private recheck(): void {
    const redis = this.session?.commands;
    if (!redis) return;
    const jids = [...this.waits.keys()];
    for (let i = 0; i < jids.length; i += MGET_CHUNK) {
      const chunk = jids.slice(i, i + MGET_CHUNK);
      redis.mget(chunk.map(resultKey)).then(
        (texts) =>
          texts.forEach((text, k) => {
            if (parseRecord(text)) for (const listener of [...(this.waits.get(chunk[k]!) ?? [])]) listener(undefined);
          }),
        () => undefined, // the next recheck or the waits' timeouts cover it
      );
    }
  }
}
