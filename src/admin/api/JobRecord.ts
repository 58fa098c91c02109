/**
 * A job as the admin API sees it, Sidekiq's `JobRecord`: the exact bytes stored in Redis (which LREM and
 * ZREM need, and which keep Ruby's number formatting) plus its parsed fields.
 *
 * A text that is not a JSON object is kept rather than dropped, with `args` = [text], as Sidekiq does,
 * so it can still be listed and deleted.
 */
import { inflateSync } from "node:zlib";
import { displayClass } from "../../wire/payload.js";
import { nowSeconds, toEpochSeconds } from "../../wire/timestamps.js";
import { DEFAULTS } from "../../platform/config/defaults.js";
import {
  compressedArgsBytes,
  displayArgs,
  inflateHead,
  isCompressed,
  type InflatedHead,
} from "../../client/compression/expand.js";

/** The most a stored backtrace may inflate to (bytes): it is shown on one job's page, never in a list. */
const MAX_BACKTRACE_BYTES = 1024 * 1024;

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function stringField(item: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const value = item[field];
  return typeof value === "string" ? value : undefined;
}

export class JobRecord {
  /** The stored text (its bytes decoded as UTF-8). */
  readonly value: string;
  /**
   * The exact stored bytes, for removing the entry by value (LREM, ZREM): a Ruby client can store bytes
   * that are not UTF-8, which `value` cannot reproduce.
   */
  readonly stored: string | Buffer;
  /** The parsed top-level fields; {} when the text is not a JSON object. */
  readonly item: Readonly<Record<string, unknown>>;
  /** True when the text is a JSON object (even one that is not a job). */
  readonly isObject: boolean;
  /** False when the text is not a job: a JSON object with a `class`, an `args` array and a `jid` (a poison pill). */
  readonly valid: boolean;
  /** The queue the job is in (lists) or will go to (sorted sets). */
  readonly queue: string;
  private shownArgs: unknown[] | undefined;

  constructor(stored: string | Buffer, queue?: string) {
    const value = typeof stored === "string" ? stored : stored.toString();
    this.stored = stored;
    this.value = value;
    const item = parseObject(value);
    this.item = item ?? {};
    this.isObject = item !== null;
    this.valid =
      item !== null &&
      typeof item.class === "string" &&
      item.class !== "" &&
      Array.isArray(item.args) &&
      typeof item.jid === "string";
    this.queue = queue ?? stringField(this.item, "queue") ?? "default";
  }

  /** A top-level field as stored (JSON-parsed). */
  get(field: string): unknown {
    return this.item[field];
  }

  get jid(): string | undefined {
    return stringField(this.item, "jid");
  }

  get klass(): string | undefined {
    return stringField(this.item, "class");
  }

  /** The class to show: `wrapped` for ActiveJob wrappers. */
  get displayClass(): string | undefined {
    const klass = this.klass;
    return klass === undefined ? undefined : displayClass({ class: klass, wrapped: stringField(this.item, "wrapped") });
  }

  /**
   * The arguments; for a text that is not JSON, [text] (so a UI can show it). Args compressed as GitLab
   * does (`compressed: true`) are shown inflated (up to `maxInflatedBytes`, synchronously), or as stored
   * when they cannot be inflated. Lists use `argsSummary`, which never inflates.
   */
  get args(): unknown[] {
    if (!this.isObject) return [this.value];
    this.shownArgs ??= displayArgs(this.item, DEFAULTS.maxInflatedBytes);
    return this.shownArgs;
  }

  /**
   * The args for a list row, as text to clip: their JSON, or "compressed, N KB" for compressed args,
   * which a list never inflates (each row could inflate to gigabytes).
   */
  argsSummary(): string {
    if (!this.isObject) return JSON.stringify([this.value]);
    const bytes = this.compressedArgsBytes;
    if (bytes !== undefined) return `compressed, ${Math.max(Math.round(bytes / 1024), 1)} KB`;
    return JSON.stringify(this.item.args ?? []);
  }

  /**
   * The args as stored, never inflated (compressed args stay one base64 string): what a listing shows,
   * with `compressedArgsBytes`. For a text that is not JSON, [text].
   */
  get storedArgs(): unknown[] {
    if (!this.isObject) return [this.value];
    return Array.isArray(this.item.args) ? (this.item.args as unknown[]) : [];
  }

  /** Bytes of the compressed args as stored (base64 decoded), read without inflating; undefined when not compressed. */
  get compressedArgsBytes(): number | undefined {
    return this.isObject && this.compressed ? compressedArgsBytes(this.item) : undefined;
  }

  /**
   * For one job's page: the first `capBytes` of the inflated args (streamed, so a bomb costs about
   * `capBytes`) and whether they were cut; undefined when the args are not compressed.
   */
  async inflatedArgs(capBytes: number): Promise<InflatedHead | undefined> {
    return this.isObject && this.compressed ? inflateHead(this.item, capBytes) : undefined;
  }

  /** True when the stored args are compressed (`compressed: true`); `args` shows them inflated. */
  get compressed(): boolean {
    return isCompressed(this.item);
  }

  /** Epoch seconds; Sidekiq 8's integer milliseconds are converted. */
  get enqueuedAt(): number | undefined {
    return toEpochSeconds(this.item.enqueued_at);
  }

  /** Epoch seconds; falls back to `enqueued_at`, as Sidekiq does. */
  get createdAt(): number | undefined {
    return toEpochSeconds(this.item.created_at) ?? this.enqueuedAt;
  }

  get failedAt(): number | undefined {
    return toEpochSeconds(this.item.failed_at);
  }

  get retriedAt(): number | undefined {
    return toEpochSeconds(this.item.retried_at);
  }

  get retryCount(): number | undefined {
    const count = this.item.retry_count;
    return typeof count === "number" ? count : undefined;
  }

  get errorClass(): string | undefined {
    return stringField(this.item, "error_class");
  }

  get errorMessage(): string | undefined {
    return stringField(this.item, "error_message");
  }

  get tags(): string[] {
    const tags = this.item.tags;
    return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === "string") : [];
  }

  /**
   * The stored backtrace lines: `error_backtrace` is base64 (6.4 with MIME newlines, 7+ strict) of
   * zlib-deflated JSON; very old jobs stored a plain array. Undefined when absent, unreadable, or
   * inflating to more than 1 MB (a hostile entry must not stall the page).
   */
  errorBacktrace(): string[] | undefined {
    const stored = this.item.error_backtrace;
    if (Array.isArray(stored)) return stored.map(String);
    if (typeof stored !== "string") return undefined;
    try {
      const inflated = inflateSync(Buffer.from(stored, "base64"), { maxOutputLength: MAX_BACKTRACE_BYTES });
      const lines: unknown = JSON.parse(inflated.toString("utf8"));
      return Array.isArray(lines) ? lines.map(String) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Seconds since the job was enqueued (or created), as `JobRecord#latency`. */
  latency(now: number = nowSeconds()): number {
    const since = this.enqueuedAt ?? this.createdAt;
    return since === undefined ? 0 : now - since;
  }
}
