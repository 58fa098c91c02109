/**
 * One entry of `schedule`, `retry` or `dead`: Sidekiq's `SortedEntry`. The score is the epoch second
 * (float) it is due (schedule, retry) or died (dead). The actions delegate to the set it came from.
 */
import type { DeathHandler } from "../../server/context.js";
import { JobRecord } from "./JobRecord.js";
import type { JobSetName } from "../../wire/keys.js";

export interface KillOptions {
  /** Called with the job and `error` after it is in the dead set. None unless given (the API is not a worker). */
  deathHandlers?: readonly DeathHandler[];
  /** The error handed to the death handlers (default: `Error("Job killed by API")`, as Sidekiq). */
  error?: Error;
}

/** The set an entry came from, as the entry sees it (JobSet implements it; declared here so the two files do not import each other). */
export interface EntrySet {
  readonly name: JobSetName;
  deleteEntry(entry: SortedEntry): Promise<boolean>;
  retryEntry(entry: SortedEntry): Promise<boolean>;
  addEntryToQueue(entry: SortedEntry): Promise<boolean>;
  killEntry(entry: SortedEntry, options?: KillOptions): Promise<boolean>;
  rescheduleEntry(entry: SortedEntry, at: number | Date): Promise<boolean>;
}

export class SortedEntry extends JobRecord {
  constructor(
    readonly set: EntrySet,
    /** Epoch seconds, exactly the double Redis holds. */
    readonly score: number,
    stored: string | Buffer,
  ) {
    super(stored);
  }

  /** When the job is due (or died). */
  get at(): Date {
    return new Date(this.score * 1000);
  }

  /** `"<score>|<jid>"`, Sidekiq's `SortedEntry#id` (the Web UI's key is `"<score>-<jid>"`). */
  get id(): string {
    return `${this.score}|${this.jid ?? ""}`;
  }

  /** True when the job has failed at least once (`error_class` is set). */
  get isError(): boolean {
    return this.errorClass !== undefined;
  }

  /** Removes the entry. False if it was no longer there. */
  delete(): Promise<boolean> {
    return this.set.deleteEntry(this);
  }

  /** Removes the entry and pushes it to its queue with retry_count - 1 ("Retry now"). */
  retry(): Promise<boolean> {
    return this.set.retryEntry(this);
  }

  /** Removes the entry and pushes it to its queue unchanged ("Add to queue"). */
  addToQueue(): Promise<boolean> {
    return this.set.addEntryToQueue(this);
  }

  /** Removes the entry and adds it to the dead set (trimmed as a worker trims it). */
  kill(options: KillOptions = {}): Promise<boolean> {
    return this.set.killEntry(this, options);
  }

  /** Moves the entry to a new time (epoch seconds or a Date). */
  reschedule(at: number | Date): Promise<boolean> {
    return this.set.rescheduleEntry(this, at);
  }
}
