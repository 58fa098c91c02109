/**
 * The push half of the plug-in seam (the run half is server/plugin.ts). A feature is one object with
 * a name and optional hooks; a Client asks each plug-in once, at construction, for its hooks, so
 * every Client has its own (settings, side tables) and a plug-in a fleet does not use returns nothing
 * and costs nothing on the push path.
 *
 * A push passes: normalize → every `stamp` (list order) → the app's client middleware → plug-in
 * middleware in REVERSE list order → strict args, serialization → every `beforeWrite` → the write
 * (a plug-in's `write` for the jobs it claims, else LPUSH/ZADD). The run side passes the plug-ins in
 * list order, so each feature sits at the same depth on both sides of Redis (docs/internals.md).
 */
import type { MiddlewareFunction } from "../platform/Chain.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { JobPayload } from "../wire/payload.js";
import type { JobClassLike } from "./options.js";
import type { ClientEventBus } from "./events.js";

/** Arguments of a client middleware: `(className, job, queue, redis, next)`. */
export type ClientMiddlewareArgs = [className: string, job: JobPayload, queue: string, redis: TsqRedis];

/** A serialized job ready for its write. */
export interface PreparedJob {
  job: JobPayload;
  json: string;
}

/** Undoes what a `beforeWrite` did for jobs whose write failed (all of them when `jids` is undefined). */
export type UndoWrite = (jids?: readonly string[]) => Promise<void>;

/** Writing a job another way than LPUSH (concurrency admission parks it or hands it a slot). */
export interface AlternateWrite {
  /**
   * Called once per job after the middleware ran, before serialization: takes (and may mark) the jobs
   * this plug-in writes itself. `writing` is false for a job built for a caller's own write: never taken.
   */
  claim(job: JobPayload, writing: boolean): void;
  /** True for a job `claim` took. */
  owns(job: JobPayload): boolean;
  /** Writes the claimed jobs, in order. Throws a PushRefusedError (ConcurrencyLimitFullError) or another error naming refusals. */
  write(redis: TsqRedis, entries: readonly PreparedJob[]): Promise<void>;
  /** Keys of lists a claimed job may have landed in, for reliable push's "did it land?" check. */
  landingLists?(job: JobPayload): string[];
}

/**
 * Takes a Client's pushes instead of Redis (tsq/testing's fake and inline modes), installed with
 * `client.divert()`. While `active`, a push runs normalize, stamps, the app's client middleware, strict
 * args and serialization as usual, then goes to `take`; plug-ins' middleware and writes, which keep
 * their state in Redis, are skipped. The `*Of` methods back `Job.jobs`, `Job.drain()` and `Job.clear()`.
 */
export interface PushDiversion {
  readonly active: boolean;
  /** Receives the jobs of one write, in order; a rejection fails the push. */
  take(entries: readonly PreparedJob[]): Promise<void>;
  /** The jobs of class `className` held in memory, oldest first. Throws when not holding jobs (not fake mode). */
  jobsOf(className: string): readonly JobPayload[];
  /** Runs the held jobs of `className`, including those pushed meanwhile; resolves to how many ran. */
  drainOf(className: string): Promise<number>;
  /** Forgets the held jobs of `className`. */
  clearOf(className: string): void;
  /**
   * What features keep for the jobs this diversion runs, keyed by a symbol of their own (durable jobs'
   * journals and signals in test modes): their Redis state, in memory. Forgotten with the held jobs.
   */
  readonly memory: Map<symbol, unknown>;
}

/**
 * A path the writes to one Redis take instead of going straight out: reliable push holds them in memory
 * while Redis is away and writes them when it is back. One per Redis a Client writes to.
 */
export interface WritePath {
  /** Writes the jobs, or holds them; rejects only when they will never be written. */
  push(entries: PreparedJob[]): Promise<void>;
  /** Jobs held, not written yet. */
  readonly heldJobs: number;
  /** Gives held jobs their chance to land; the Client closes the connection afterwards. */
  close(): Promise<void>;
}

/** What a plug-in's client hooks are built from. */
export interface ClientSetup {
  /** The Client's settings its plug-ins declare (`clientSettings`), as given: absent when not given. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The options of the worker this Client belongs to (its plug-ins' settings among them); none on its own. */
  readonly workerOptions: Readonly<Record<string, unknown>> | undefined;
  /** The Client's emitter: what plug-ins announce about its pushes (client/events.ts). */
  readonly events: ClientEventBus;
}

export interface ClientHooks {
  /** Fills or checks payload fields at push (expiry, batch membership, correlation id). May throw ArgumentError. */
  stamp?(job: JobPayload, klass: string | JobClassLike): void;
  /** Client middleware; runs after the app's, plug-ins in reverse list order. */
  middleware?: MiddlewareFunction<ClientMiddlewareArgs>;
  /**
   * False when the middleware only concerns jobs naming a lock, which the poller's batched move hands
   * back for the client path anyway (enqueue-due-2.lua): scheduled jobs then move in batches.
   */
  replaysScheduled?: boolean;
  /** Before the write (batch members join their batch first); undefined when nothing to do (no tick). */
  beforeWrite?(redis: TsqRedis, jobs: readonly JobPayload[]): Promise<UndoWrite> | undefined;
  alternateWrite?: AlternateWrite;
  /**
   * The path writes take (the first plug-in's that has one). `write` is the plain write; `landingLists`
   * names other lists a claimed job may have landed in. A Client with such a path opens its connections
   * without ioredis's offline queue and does not wait for an unconnected Redis: the path holds writes.
   */
  writePath?: (
    redis: TsqRedis,
    write: (entries: PreparedJob[]) => Promise<void>,
    landingLists: (job: JobPayload) => string[],
  ) => WritePath;
}

/** The part of a plug-in a Client reads. */
export interface ClientPlugin {
  readonly name: string;
  /**
   * The job options this feature reads, as written in `static options` (camelCase): known keys, so a
   * near-miss typo of one is refused at push and registration (client/jobOptionKeys.ts).
   */
  readonly jobOptions?: readonly string[];
  /**
   * The `new Client({...})` settings this feature reads (e.g. "reliablePush"), typed by its own
   * `declare module` on ClientOptions: known to the Client's typo check and handed to `client(setup)` in
   * `setup.settings` as given.
   */
  readonly clientSettings?: readonly string[];
  /** Hooks for one Client; undefined when the plug-in adds nothing to pushes. */
  client?(setup: ClientSetup): ClientHooks | undefined;
}
