/**
 * A batch: jobs tracked as a group, with callbacks when the group is done. Sidekiq Pro's model:
 *
 *   const batch = new Batch({ description: "import 2026-11-23" });
 *   batch.on("success", ImportDone, { file: "rows.csv" });
 *   await batch.jobs(async () => {
 *     for (const row of rows) await ImportRow.performAsync(row);
 *   });
 *
 * `jobs` is atomic: every job pushed inside the block joins the batch before it is pushed, and no
 * callback fires until the block has returned (or thrown: the jobs pushed before the error stay
 * members). A block whose process dies midway never seals: the batch never fires and expires
 * (`expiresIn`). Inside a batch job, `this.batch.jobs(...)` adds jobs to the job's own batch, and a
 * `new Batch()` is a child: the parent's `complete`/`success` wait for it, its `death` reaches them.
 * Callbacks are ordinary jobs, `perform(status, options)`, each pushed exactly once (batch-event-1.lua).
 */
import { createHash, randomBytes } from "node:crypto";
import { ArgumentError } from "../../../wire/errors.js";
import type { Client } from "../../../client/Client.js";
import { defaultClient } from "../../../client/defaultClient.js";
import type { JobClassLike } from "../../../client/options.js";
import { dumpPayload, parsePayload, type JsonValue } from "../../../wire/payload.js";
import { pushing, running } from "./context.js";
import { openBatch } from "./open.js";
import { applyBatchEvent, BATCH_EVENTS, type BatchEvent } from "./events.js";
import { batchSettings, positive } from "./settings.js";
import { batchStatus, type BatchStatus } from "./status.js";
import { BatchError, refused } from "./refusal.js";

export interface BatchOptions {
  description?: string;
  /** The parent batch (default: the batch of the `jobs` block or of the running job this is made in). */
  parent?: Batch | string;
  /** Seconds a succeeded batch's keys stay readable (default TSQ_BATCH_LINGER, 24 h). */
  linger?: number;
  /** Seconds an unfinished batch lives after its latest `jobs` block (default TSQ_BATCH_EXPIRES_IN, 30 days). */
  expiresIn?: number;
  /** Pushes through this client (default: the process's default client). */
  client?: Client;
}

/** Push options of a callback job: its queue and any job option, snake_case as on the wire. */
export interface CallbackOptions {
  queue?: string;
  [field: string]: unknown;
}

const STATUS_PLACEHOLDER = "$TSQ_STATUS$";

export class Batch {
  readonly bid: string;
  readonly description: string;
  private readonly parentBid: string;
  private readonly linger: number;
  private readonly expiresIn: number;
  private readonly client: Client | undefined;
  /** `head`: the callback job's JSON without `args` and `enqueued_at`; `rest`: its args after the status. */
  private readonly callbacks: { event: BatchEvent; queue: string; head: string; rest: string }[] = [];
  private readonly pendingCallbacks: Promise<void>[] = [];
  /** Set once the batch exists in Redis; a reopened batch (`this.batch`) exists from the start. */
  private opened: boolean;
  private readonly reopened: boolean;
  /** Block tokens are `<token>:<n>`, one per `jobs` call (blocks may run at once); "" for none. */
  private readonly token: string;
  private blocks = 0;

  /** `fixed`: a known bid (and block token), for `reopen` and workflow stages. */
  constructor(options: BatchOptions = {}, fixed?: { bid: string; token: string; reopen: boolean }) {
    const settings = batchSettings();
    this.description = options.description ?? "";
    this.linger = positive(options.linger, "Batch linger", settings.linger);
    this.expiresIn = positive(options.expiresIn, "Batch expiresIn", settings.expiresIn);
    this.client = options.client;
    this.reopened = fixed?.reopen === true;
    this.opened = this.reopened;
    const job = running.getStore();
    if (fixed) {
      this.bid = fixed.bid;
      this.parentBid = "";
      this.token = fixed.token;
      return;
    }
    const parent = options.parent ?? pushing.getStore()?.bid ?? job?.bid;
    this.parentBid = parent instanceof Batch ? parent.bid : (parent ?? "");
    // Made inside a job: the n-th batch of this run gets the same bid and token when a SIGKILL makes
    // reliable fetch run the job again, so the re-run reopens and seals it instead of leaving it open.
    if (job) {
      const seed = `${job.jid}:${job.attempt}:${job.children++}`;
      this.bid = createHash("sha256").update(seed).digest("base64url").slice(0, 14);
      this.token = `job:${seed}`;
    } else {
      this.bid = randomBytes(12).toString("base64url").slice(0, 14);
      this.token = `block:${randomBytes(9).toString("base64url")}`;
    }
  }

  /** The batch of a running job (`this.batch`): `jobs` adds to it; its callbacks were set when it was made. */
  static reopen(bid: string, client?: Client): Batch {
    return new Batch(client ? { client } : {}, { bid, token: "", reopen: true });
  }

  /** Total, pending, failures, dead jids and times of a batch; undefined once it expired. */
  static status(bid: string, client?: Client): Promise<BatchStatus | undefined> {
    return batchStatus((client ?? defaultClient()).redis, bid);
  }

  /** Adds a callback: `klass.perform(status, options)` is pushed once when `event` happens. */
  on(
    event: BatchEvent,
    klass: JobClassLike | string,
    options: Record<string, JsonValue> = {},
    push: CallbackOptions = {},
  ): this {
    if (!BATCH_EVENTS.includes(event))
      throw new ArgumentError(`unknown batch event "${String(event)}"; use one of ${BATCH_EVENTS.join(", ")}`);
    if (this.opened)
      throw new ArgumentError(`batch ${this.bid}: add callbacks before its first jobs block (they are stored with it)`);
    if (options === null || typeof options !== "object" || Array.isArray(options))
      throw new ArgumentError("batch callback options must be a plain object, e.g. { to: 'ops@example.com' }");
    // Built now, outside any block (a callback is no member): a bad class or option throws here, at
    // the call; what only a middleware can refuse rejects the next `jobs` block.
    const built = pushing.exit(() =>
      this.pushClient().build({ ...push, class: klass, args: [STATUS_PLACEHOLDER, options] }),
    );
    const pending = built.then((result) => {
      if (result === null) throw new BatchError(`a client middleware refused the ${event} callback`);
      // The batch's script pushes its callbacks where the batch lives: a queue of another shard (slot
      // group) would get a list there that none of its workers reads, and the callback would never run.
      if (!this.pushClient().ownsQueue(result.job.queue))
        throw new BatchError(
          `the ${event} callback of batch ${this.bid} cannot go to queue ${result.job.queue}: it lives on another ` +
            "shard (slot group) than the batch, whose callbacks are pushed where the batch lives; give the callback " +
            `a queue of the batch's shard: on("${event}", klass, options, { queue })`,
        );
      this.callbacks.push({ event, queue: result.job.queue, ...callbackParts(event, result.json) });
    });
    // Awaited by `jobs`; until then a refusal must not surface as an unhandled rejection.
    pending.catch(() => undefined);
    this.pendingCallbacks.push(pending);
    return this;
  }

  /** Runs `fn`; every job it pushes joins this batch. Callbacks can fire only after it returns. */
  async jobs<T>(fn: () => Promise<T> | T): Promise<T> {
    // Numbered in call order, so a job re-run after a SIGKILL reuses (and seals) the tokens it left.
    const token = this.token === "" ? "" : `${this.token}:${this.blocks++}`;
    await Promise.all(this.pendingCallbacks);
    await this.open(token);
    try {
      return await pushing.run({ bid: this.bid }, fn);
    } finally {
      if (token !== "") {
        const client = this.pushClient();
        await applyBatchEvent(client.redis, "seal", this.bid, token, { events: client.events });
      }
    }
  }

  private async open(token: string): Promise<void> {
    const fields: string[] = ["description", this.description, "linger", String(this.linger)];
    for (const event of BATCH_EVENTS) {
      const mine = this.callbacks.filter((c) => c.event === event).map((c) => [c.queue, c.head, c.rest]);
      if (mine.length > 0) fields.push(`cb:${event}`, JSON.stringify(mine));
    }
    try {
      await openBatch(this.pushClient().redis, {
        bid: this.bid,
        mode: this.reopened ? "reopen" : "create",
        expiresInSeconds: this.expiresIn,
        token,
        parentBid: this.parentBid,
        fields,
      });
    } catch (error) {
      throw refused(error);
    }
    this.opened = true;
  }

  private pushClient(): Client {
    return this.client ?? defaultClient();
  }
}

/**
 * The stored form of a callback job, edited as data: batch-event-1.lua makes the job at fire time as
 * `head` plus `"args":[<status>, …rest]` and `"enqueued_at":<fire time>`, so nothing in the user's
 * options (an `enqueued_at` of their own, a "$TSQ_STATUS$" text) is ever mistaken for those fields.
 */
function callbackParts(event: BatchEvent, json: string): { head: string; rest: string } {
  const job = parsePayload(json);
  if (job.args[0] !== STATUS_PLACEHOLDER) {
    throw new BatchError(
      `the ${event} callback's arguments were rewritten before it was stored (compressed as too big, or ` +
        "changed by a client middleware); keep callback options small and leave its args alone",
    );
  }
  const { args, enqueued_at: _enqueuedAt, ...head } = job;
  return { head: dumpPayload(head), rest: JSON.stringify(args.slice(1)) };
}
