/**
 * `schedule`, `retry` and `dead`: Sidekiq's `JobSet`. Each is a ZSET of job JSON scored by epoch
 * seconds (float). Listing is newest first (highest score), 50 per page, as the Web UI shows it.
 *
 * An entry is identified by its exact text (ZREM by value), falling back to Sidekiq's identity, score
 * plus jid (reference §1.9), when the text changed under us. Removing by exact value is atomic: when
 * a worker's poller and an admin race for the same entry, exactly one of them gets it, so "retry now"
 * never enqueues a job twice.
 */
import type { Redis } from "ioredis";
// The package's Client: a re-push runs every built-in feature, whatever else the process imported.
import { Client } from "../../client/Client.js";
import { packagePlugins } from "../../packagePlugins.js";
import { DEFAULTS } from "../../platform/config/defaults.js";
import { InvalidPayloadError } from "../../wire/errors.js";
import type { JobSetName } from "../../wire/keys.js";
import { dumpPayload, parsePayload, type JobPayload } from "../../wire/payload.js";
import { sendManyToMorgue, sendToMorgue, type MorgueLimits } from "../../server/morgue.js";
import { formatSeconds } from "../../wire/timestamps.js";
import { SortedEntry, type EntrySet, type KillOptions } from "./SortedEntry.js";
import { AdminLocks } from "./AdminLocks.js";
import type { Plugin } from "../../server/plugin.js";
import { Pacer, type PaceOptions } from "./Pacer.js";
import { exactKey, parseScore, requeued, substringPattern, toSeconds } from "./setEntryText.js";

export interface JobSetOptions {
  /** Pushes retried jobs, so its middleware runs (default: a plain Client on the same connection). */
  client?: Client;
  /** Entries the dead set keeps when a job is killed (default 10,000, Sidekiq `dead_max_jobs`). */
  deadMaxJobs?: number;
  /** Seconds a dead entry is kept (default 180 days, Sidekiq `dead_timeout_in_seconds`). */
  deadTimeoutInSeconds?: number;
  /** Whose locks a removed job frees (plug-ins' `locks`; default: the package's list). */
  plugins?: readonly Plugin[];
}

const PAGE_SIZE = 50;
/** `popBatches`'s prepare for actions that take any entry, job or not. */
const anyEntry = (): true => true;

/** Entries `retryAll`/`killAll` pop per ZPOPMIN and act on concurrently. */
const POP_BATCH = 500;

export class JobSet implements AsyncIterable<SortedEntry>, EntrySet {
  /** Entries removed through this object, so a walk that deletes as it goes does not skip any. */
  private removed = 0;
  private ownClient: Client | undefined;
  protected readonly locks: AdminLocks;
  constructor(
    protected readonly redis: Redis,
    readonly name: JobSetName,
    protected readonly options: JobSetOptions = {},
  ) {
    this.locks = new AdminLocks(options.plugins);
  }

  size(): Promise<number> {
    return this.redis.zcard(this.name);
  }

  [Symbol.asyncIterator](): AsyncIterator<SortedEntry> {
    return this.each();
  }

  /**
   * Newest first, in pages of `pageSize` read from the top of the set (`ZRANGE -50 -1`, then
   * `-100 -51`, ...). Entries removed through this set during the walk shift the next page, as in
   * Sidekiq's `JobSet#each`.
   */
  async *each(pageSize = PAGE_SIZE): AsyncGenerator<SortedEntry> {
    const removedBefore = this.removed;
    for (let page = -1; ; page--) {
      const end = Math.min(page * pageSize + (this.removed - removedBefore) + pageSize - 1, -1);
      const flat = await this.redis.zrangeBuffer(this.name, end - pageSize + 1, end, "WITHSCORES");
      if (flat.length === 0) return;
      const entries = this.entries(flat);
      for (let i = entries.length - 1; i >= 0; i--) yield entries[i]!;
    }
  }

  /** Up to `limit` entries, newest first. */
  async first(limit: number): Promise<SortedEntry[]> {
    const found: SortedEntry[] = [];
    if (limit <= 0) return found;
    for await (const entry of this.each(Math.min(limit, PAGE_SIZE))) {
      found.push(entry);
      if (found.length >= limit) break;
    }
    return found;
  }

  /**
   * One page: `count` entries from position `start`, newest first (`ZRANGE start stop REV`), or
   * lowest score first with `oldestFirst`. Never reads the whole set.
   */
  async page(start: number, count: number, oldestFirst = false): Promise<SortedEntry[]> {
    if (count <= 0 || start < 0) return [];
    const stop = start + count - 1;
    const flat = oldestFirst
      ? await this.redis.zrangeBuffer(this.name, start, stop, "WITHSCORES")
      : await this.redis.zrevrangeBuffer(this.name, start, stop, "WITHSCORES");
    return this.entries(flat);
  }

  /**
   * Entries whose text contains `match` (`ZSCAN MATCH *match*`; a pattern with `*` is used as given),
   * in no particular order. Each entry is reported once even if ZSCAN repeats it during a rehash.
   */
  async *scan(match: string, count = 100): AsyncGenerator<SortedEntry> {
    const pattern = substringPattern(match);
    const seen = new Set<string>();
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.zscanBuffer(this.name, cursor, "MATCH", pattern, "COUNT", count);
      for (const entry of this.entries(flat)) {
        const key = exactKey(entry.stored);
        if (seen.has(key)) continue;
        seen.add(key);
        yield entry;
      }
      cursor = next.toString();
    } while (cursor !== "0");
  }

  /** The entry whose jid is `jid`, found with ZSCAN (O(n); for admin use, not application logic). */
  async findJob(jid: string): Promise<SortedEntry | null> {
    for await (const entry of this.scan(jid)) if (entry.jid === jid) return entry;
    return null;
  }

  /** Entries scored exactly `score`, optionally only those with `jid` (Sidekiq `JobSet#fetch`). */
  async fetch(score: number, jid?: string): Promise<SortedEntry[]> {
    const text = String(score);
    const flat = await this.redis.zrangebyscoreBuffer(this.name, text, text, "WITHSCORES");
    return this.entries(flat).filter((entry) => jid === undefined || entry.jid === jid);
  }

  /** Removes the entry with exactly these bytes. */
  async deleteByValue(value: string | Buffer): Promise<boolean> {
    const removed = (await this.redis.zrem(this.name, value)) === 1;
    if (removed) this.removed++;
    return removed;
  }

  /** Removes the entry scored `score` whose jid is `jid`. */
  async deleteByJid(score: number, jid: string): Promise<boolean> {
    for (const entry of await this.fetch(score, jid)) if (await this.deleteByValue(entry.stored)) return true;
    return false;
  }

  /** Adds a job at `at` (epoch seconds or a Date). */
  async schedule(at: number | Date, job: JobPayload | string): Promise<void> {
    await this.redis.zadd(this.name, formatSeconds(toSeconds(at)), typeof job === "string" ? job : dumpPayload(job));
  }

  /**
   * Removes every entry (UNLINK), then releases the locks the removed jobs held (found first with
   * ZSCAN MATCH on the plug-ins' lock markers, so only those jobs cross the network; every entry when a
   * plug-in names no marker). Resolves to how many entries there were.
   */
  async clear(): Promise<number> {
    const locked: Buffer[] = [];
    const { markers } = this.locks;
    for (const match of markers === undefined ? [undefined] : markers) {
      let cursor = "0";
      do {
        const [next, flat] =
          match === undefined
            ? await this.redis.zscanBuffer(this.name, cursor, "COUNT", 1000)
            : await this.redis.zscanBuffer(this.name, cursor, "MATCH", `*${match}*`, "COUNT", 1000);
        cursor = next.toString();
        for (let i = 0; i < flat.length; i += 2) locked.push(flat[i]!); // a job in two scans: its second release is a no-op
      } while (cursor !== "0");
    }
    const results = (await this.redis.multi().zcard(this.name).unlink(this.name).exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    await this.locks.release(this.redis, locked);
    return Number(results[0]?.[1] ?? 0);
  }

  /**
   * Pushes every entry to its queue with retry_count - 1 (`ZPOPMIN` loop, Sidekiq >= 7.3.5): each
   * popped batch goes through the client's middleware and out in one round trip. With `perSecond`, at
   * most that many a second (src/admin/api/Pacer.ts); an aborted `signal` stops it between batches.
   */
  retryAll(pace: PaceOptions = {}): Promise<number> {
    // Parsed once, as it is popped: an entry that is not a job stays in the set, untouched.
    const asJob = (text: Buffer) => {
      try {
        return requeued(text);
      } catch (error) {
        if (error instanceof InvalidPayloadError) return undefined;
        throw error;
      }
    };
    return this.popBatches(asJob, new Pacer(POP_BATCH, pace), async (batch) => {
      const pushed = await this.putBackOnError(batch, () => this.client().pushMany(batch.map(([, , job]) => job)));
      const refused = batch.filter((_, i) => pushed[i] === null);
      if (refused.length === 0) return batch.length;
      await this.restore(refused);
      throw new Error(
        `a client middleware refused to push ${refused.length} job(s); they were put back in ${this.name}`,
      );
    });
  }

  /** Moves every entry to the dead set (`ZPOPMIN` loop; one MULTI per popped batch). */
  killAll(options: KillOptions = {}): Promise<number> {
    return this.popBatches(anyEntry, new Pacer(POP_BATCH), async (batch) => {
      const texts = batch.map(([text]) => text);
      await this.putBackOnError(batch, () => sendManyToMorgue(this.redis, texts, this.morgueLimits()));
      await this.locks.release(this.redis, texts);
      for (const text of texts) await this.runDeathHandlers(text, options);
      return batch.length;
    });
  }

  // Actions on one entry, called through SortedEntry.

  /** Removes the entry; a lock it held is released (a new push of the same job is accepted). */
  async deleteEntry(entry: SortedEntry): Promise<boolean> {
    const text = await this.take(entry);
    if (text === null) return false;
    await this.locks.release(this.redis, [text]);
    return true;
  }

  async retryEntry(entry: SortedEntry): Promise<boolean> {
    return this.moveToQueue(entry, true);
  }

  async addEntryToQueue(entry: SortedEntry): Promise<boolean> {
    return this.moveToQueue(entry, false);
  }

  async killEntry(entry: SortedEntry, options: KillOptions = {}): Promise<boolean> {
    const text = await this.take(entry);
    if (text === null) return false;
    await this.morgue(text, options);
    await this.locks.release(this.redis, [text]);
    return true;
  }

  /**
   * Sidekiq does `ZINCRBY set (at - score) <re-serialized job>`; if a poller took the entry just
   * before, that re-creates it with a score of `at - score` (long past), so it runs again at once.
   * `ZADD XX` sets the same score on the same member but never re-creates a taken entry.
   */
  async rescheduleEntry(entry: SortedEntry, at: number | Date): Promise<boolean> {
    const changed = await this.redis.zadd(this.name, "XX", "CH", formatSeconds(toSeconds(at)), entry.stored);
    if (Number(changed) === 1) return true;
    return (await this.redis.zscore(this.name, entry.stored)) !== null;
  }

  /** The dead-set add and trim (`DeadSet#kill`), then the death handlers if any were given. */
  protected async morgue(text: string | Buffer, options: KillOptions): Promise<void> {
    await sendToMorgue(this.redis, text, this.morgueLimits());
    await this.runDeathHandlers(text, options);
  }

  private morgueLimits(): MorgueLimits {
    return {
      deadMaxJobs: this.options.deadMaxJobs ?? DEFAULTS.deadMaxJobs,
      deadTimeoutInSeconds: this.options.deadTimeoutInSeconds ?? DEFAULTS.deadTimeoutInSeconds,
    };
  }

  private async runDeathHandlers(text: string | Buffer, options: KillOptions): Promise<void> {
    if (!options.deathHandlers || options.deathHandlers.length === 0) return;
    const entry = new SortedEntry(this, 0, text);
    // A text that is not a job (a poison pill) can be killed, but there is no job to tell handlers about.
    if (!entry.valid) return;
    const job = parsePayload(entry.value);
    const error = options.error ?? new Error("Job killed by API");
    for (const handler of options.deathHandlers) await handler(job, error);
  }

  private entries(flat: Buffer[]): SortedEntry[] {
    const entries: SortedEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      entries.push(new SortedEntry(this, parseScore(flat[i + 1]!.toString()), flat[i]!));
    return entries;
  }

  /** Removes the entry and returns the bytes removed, or null if someone else got it first. */
  private async take(entry: SortedEntry): Promise<string | Buffer | null> {
    if (await this.deleteByValue(entry.stored)) return entry.stored;
    // The exact text is gone: taken by a poller, or rewritten (Sidekiq's reschedule re-serializes).
    const jid = entry.jid;
    if (jid === undefined) return null;
    for (const other of await this.fetch(entry.score, jid))
      if (await this.deleteByValue(other.stored)) return other.stored;
    return null;
  }

  private async moveToQueue(entry: SortedEntry, decrementRetryCount: boolean): Promise<boolean> {
    if (!entry.valid)
      throw new InvalidPayloadError(
        `entry ${entry.id} of ${this.name} is not a job (${entry.value.slice(0, 80)}); delete it instead`,
      );
    const text = await this.take(entry);
    if (text === null) return false;
    return this.enqueue(text, entry.score, decrementRetryCount);
  }

  /**
   * Pushes a removed entry through the client, as Sidekiq's `SortedEntry#retry` (`Client.push`, so
   * `enqueued_at` is new and client middleware runs). Unchanged fields keep their stored text. If the
   * push fails or a middleware refuses it, the entry is put back and the error reported.
   */
  private async enqueue(text: string | Buffer, score: number, decrementRetryCount: boolean): Promise<boolean> {
    const pushed = await this.putBackOnError([[text, score]], () =>
      this.client().push(requeued(text, decrementRetryCount)),
    );
    if (pushed !== null) return true;
    await this.restore([[text, score]]);
    throw new Error(`a client middleware refused to push the job; it was put back in ${this.name}`);
  }

  /** Runs `fn`; if it throws, puts `batch` back first. */
  private async putBackOnError<T>(
    batch: readonly (readonly [string | Buffer, number, ...unknown[]])[],
    fn: () => Promise<T>,
  ): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      await this.restore(batch);
      throw error;
    }
  }

  /** Puts entries back with their scores, in one ZADD. */
  private async restore(entries: readonly (readonly [string | Buffer, number, ...unknown[]])[]): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.zadd(this.name, ...entries.flatMap(([text, score]) => [formatSeconds(score), text]));
  }

  /**
   * Pops the lowest entries, `POP_BATCH` at a time, at most `size` in all, so entries added meanwhile
   * wait for the next call, and hands each batch to `action`: one round trip per batch instead of one
   * per entry. An action that fails puts back what it did not do, then throws, which ends the walk.
   * `prepare` makes each entry what the action needs; an entry it returns undefined for is put back at
   * the end, untouched.
   */
  private async popBatches<T>(
    prepare: (text: Buffer) => T | undefined,
    pacer: Pacer,
    action: (batch: [Buffer, number, T][]) => Promise<number>,
  ): Promise<number> {
    let left = await this.size();
    const skipped: [Buffer, number][] = [];
    let done = 0;
    // One batch's action runs while the next batch is popped and prepared: Redis and the client's CPU
    // work overlap instead of taking turns.
    let inFlight: Promise<number> | undefined;
    try {
      while (left > 0) {
        await pacer.ready();
        if (pacer.stopped) break;
        const popped = await this.redis.zpopminBuffer(this.name, Math.min(left, pacer.batchSize));
        if (popped.length < 2) break;
        pacer.took(popped.length / 2);
        const batch: [Buffer, number, T][] = [];
        for (let i = 0; i + 1 < popped.length; i += 2) {
          left--;
          this.removed++;
          const [text, score] = [popped[i]!, parseScore(popped[i + 1]!.toString())];
          const prepared = prepare(text);
          if (prepared === undefined) skipped.push([text, score]);
          else batch.push([text, score, prepared]);
        }
        if (batch.length === 0) continue;
        const previous = inFlight;
        inFlight = action(batch);
        if (previous) pacer.progress((done += await previous));
      }
      const last = inFlight;
      inFlight = undefined;
      if (last) pacer.progress((done += await last));
    } finally {
      // After a failure, the batch still in flight settles (it puts back what it did not do) first.
      await inFlight?.catch(() => undefined);
      await this.restore(skipped);
    }
    return done;
  }

  private client(): Client {
    return this.options.client ?? (this.ownClient ??= new Client({ redis: this.redis, plugins: packagePlugins() }));
  }
}
