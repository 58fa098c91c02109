/**
 * Lua scripts, each kept as `<name>-<numKeys>.lua` with a KEYS/ARGV header in the folder of the code that
 * calls it, registered once per connection through ioredis `defineCommand` (EVALSHA, reloaded on
 * NOSCRIPT) and exposed as typed functions. Nothing else calls EVAL.
 */
import { readFileSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";

/** The compiled source root (dist/src): every `.lua` below it, outside `lib/` folders, is a command. */
const SOURCE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The typed commands added to every tsq connection. Add one line here per new `.lua` file. These are
 * positional, as ioredis calls them; a script with more than a few arguments is called only through
 * one typed function taking a named object (e.g. limitSlot.ts, recoverList.ts), which builds its keys.
 */
export interface ScriptCommands {
  /** zpopbyscore-1.lua: pops one member of `set` scored <= `now`. */
  zpopbyscore(set: string, now: string): Promise<string | null>;
  /** enqueue-due-2.lua: moves up to `limit` due jobs to their queues; [moved, ...jobs for the client path]. */
  enqueueDue(
    set: string,
    queues: string,
    now: string,
    limit: number,
    enqueuedAt: string,
    queuePrefix: string,
  ): Promise<[number, ...string[]]>;
  /** leader-renew-1.lua: extends `key` by `ttl` seconds if it still holds `identity`; 1 renewed, 0 not ours. */
  leaderRenew(key: string, identity: string, ttl: number): Promise<number>;
  /** leader-resign-1.lua: deletes `key` if it still holds `identity`; 1 deleted, 0 not ours. */
  leaderResign(key: string, identity: string): Promise<number>;
  /** cron-claim-4.lua: claims a periodic tick and pushes its job; 1 pushed, 0 taken, 2 disabled (skipped), -1 schedule gone. */
  cronClaim(
    schedule: string,
    tickKey: string,
    queues: string,
    queueKey: string,
    tick: number,
    identity: string,
    ttl: number,
    queue: string,
    job: string,
  ): Promise<number>;
  /** push-jobs-2.lua: SADD queues + LPUSH of `jobs` in one atomic command; the queue's new length. */
  pushJobs(queues: string, queueKey: string, queue: string, ...jobs: string[]): Promise<number>;
  /** record-outcome-2.lua (features/outcomes): SET the result key with its TTL, XADD the capped stream; the entry id. */
  recordOutcome(
    resultKey: string,
    stream: string,
    record: string,
    ttl: number,
    cap: number,
    ...fields: string[]
  ): Promise<string>;
  /** ack-jobs-1.lua: removes finished jobs from a private list, by their marks (ackMark.ts); how many were removed. */
  ackJobs(privateList: string, marks: string, ...whole: (string | Buffer)[]): Promise<number>;
  /**
   * reliable-fetch.lua: `numKeys`, the (queue, private list) pairs, the most jobs to move, then the marks
   * of finished jobs to acknowledge first, one string per pair; [pair index, ...jobs as their exact
   * bytes] or null.
   */
  reliableFetchBuffer(
    numKeys: number,
    ...keysThenArgs: (string | number | Buffer)[]
  ): Promise<[number, ...Buffer[]] | null>;
  /** reconcile-2.lua: moves private-list jobs not in `held` back to the queue; how many moved. */
  reconcile(privateList: string, queue: string, ...held: Buffer[]): Promise<number>;
  /** recover-3.lua with the poison pills as their exact bytes. */
  recoverBuffer(...args: Parameters<ScriptCommands["recover"]>): Promise<[number, ...Buffer[]]>;
  /** recover-3.lua: [moved, ...poison pills]. */
  recover(
    privateList: string,
    queue: string,
    schedule: string,
    counterPrefix: string,
    windowSeconds: number,
    maxRecoveries: number,
    now: string,
    spreadSeconds: number,
    seed: number,
  ): Promise<[number, ...string[]]>;
  /** lock-acquire-2.lua: takes `lock` for `holder` (ms ttl, up to `limit` holders); [1, holder] or [0, a current holder]. */
  lockAcquire(
    lock: string,
    flag: string,
    holder: string,
    ttlMs: number,
    limit: number,
    nowMs: number,
    useFlag: "0" | "1",
  ): Promise<[0 | 1, string]>;
  /** suj-lock-7.lua: takes a sidekiq-unique-jobs lock (keys of sujKeys + both digest indexes); [1, jid] or [0, a holder]. */
  sujLock(
    digest: string,
    queued: string,
    primed: string,
    locked: string,
    info: string,
    digests: string,
    expiringDigests: string,
    jid: string,
    pttl: number,
    type: string,
    limit: number,
    nowSeconds: string,
  ): Promise<[0 | 1, string]>;
  /** suj-unlock-6.lua: releases a jid's sidekiq-unique-jobs lock as the gem does; 1 released, 0 not its holder. */
  sujUnlock(
    digest: string,
    queued: string,
    primed: string,
    locked: string,
    info: string,
    digests: string,
    jid: string,
    type: string,
    limit: number,
  ): Promise<number>;
  /** suj-delete-job-3.lua: removes the job whose text contains both needles from a queue, schedule, retry. */
  sujDeleteJob(
    queue: string,
    schedule: string,
    retry: string,
    digestNeedle: string,
    jidNeedle: string,
  ): Promise<string | null>;
  /** lock-refresh-1.lua: extends `holder`'s expiry to now + `ttlMs` if it still holds `lock`; 1 or 0. */
  lockRefresh(lock: string, holder: string, ttlMs: number, nowMs: number): Promise<number>;
  /**
   * limit-slot-4.lua: takes ("enter") or gives back ("leave") a concurrency-limit slot, or admits a pushed
   * job ("admit"), parking or resuming jobs; [status, running, parked] (enter: 1 run, 0 parked, -1 parked
   * list full; admit: 1 granted, 0 parked, -1 refused; leave: jobs resumed).
   */
  limitSlot(
    slots: string,
    parked: string,
    limits: string,
    queues: string,
    op: "enter" | "leave" | "admit",
    holder: string,
    ttlMs: number,
    limit: number,
    nowMs: number,
    className: string,
    queuePrefix: string,
    job: string,
    maxParked: number,
    resumed: "0" | "1",
  ): Promise<[number, number, number]>;
  /** batch-open-1.lua: creates or reopens a batch for a `jobs` block; 1 created, 2 reopened (src/features/flow/batches). */
  batchOpen(
    index: string,
    prefix: string,
    bid: string,
    now: string,
    expiresIn: string,
    mode: "create" | "reopen",
    token: string,
    parent: string,
    ...fields: string[]
  ): Promise<number>;
  /** durable-park-5.lua (features/durable): parks a waitFor() unless its signal is there; see the script's header. */
  durablePark(
    journal: string,
    signal: string,
    waiters: string,
    schedule: string,
    waitingIndex: string,
    jid: string,
    stepName: string,
    position: number,
    payload: string,
    deadline: number,
    now: number,
    ttl: number,
    event: string,
  ): Promise<[string, string?]>;
  /**
   * durable-signal-5.lua (features/durable): stores a signal and enqueues the jobs parked on it
   * (`enqueuedAt` "": leaves them due in `schedule` for the poller); how many woke.
   */
  durableSignal(
    signal: string,
    waiters: string,
    schedule: string,
    queues: string,
    waitingIndex: string,
    data: string,
    retention: number,
    journalPrefix: string,
    event: string,
    enqueuedAt: string,
    queuePrefix: string,
  ): Promise<number>;
  /** batch-join-3.lua: makes `jids` members of the batch (its hash, pending and unrun keys); its new total. */
  batchJoin(batchHash: string, pending: string, unrun: string, ...jids: string[]): Promise<number>;
  /** batch-event-1.lua: applies a member's event, fires due callbacks; [bid, event, ...] fired. */
  batchEvent(
    index: string,
    prefix: string,
    queuePrefix: string,
    queues: string,
    now: string,
    enqueuedAt: string,
    failCap: string,
    op: string,
    bid: string,
    member: string,
    info: string,
  ): Promise<string[]>;
  /** rate-bucket-1.lua: takes `cost` from a bucket limiter; [1, now ms] or [0, ms until the interval ends]. */
  rateBucket(bucket: string, limit: number, intervalMs: number, cost: number): Promise<[0 | 1, number]>;
  /** rate-window-1.lua: takes `cost` from a sliding window; [1, now ms] or [0, ms until room]. */
  rateWindow(window: string, limit: number, windowMs: number, id: string, cost: number): Promise<[0 | 1, number]>;
  /** rate-leaky-1.lua: pours `cost` into a leaky bucket; [1, now ms] or [0, ms until it fits]. */
  rateLeaky(bucket: string, capacity: number, periodMs: number, cost: number): Promise<[0 | 1, number]>;
  /**
   * keyed-limit-6.lua: the gate of one key of a class's `static limit`; [status, parked] (enter: 1 run,
   * 0 parked, -1 refused; leave/resume: jobs handed back).
   */
  keyedLimit(
    holders: string,
    window: string,
    parked: string,
    ready: string,
    waiting: string,
    queues: string,
    op: "enter" | "leave" | "resume",
    jid: string,
    leaseMs: number,
    concurrency: number,
    rate: number,
    windowMs: number,
    limitKey: string,
    className: string,
    queuePrefix: string,
    job: string,
    maxParked: number,
    batch: number,
  ): Promise<[number, number]>;
}

export type TsqRedis = Redis & ScriptCommands;

interface Script {
  name: string;
  /** undefined: the caller passes the key count first. */
  numberOfKeys: number | undefined;
  lua: string;
}

let cached: Map<string, string> | undefined;
/** Every script's text, read once per process: a process opens several connections, each defining all. */
let loaded: Script[] | undefined;

/** Script file name -> absolute path, for every script under the source root (names are unique). */
function scriptFiles(): Map<string, string> {
  if (cached) return cached;
  const found = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        // lib/ holds included Lua (not commands); assets/ is the dashboard's static files.
        if (entry.name !== "lib" && entry.name !== "assets" && entry.name !== "node_modules") walk(path);
      } else if (entry.name.endsWith(".lua")) {
        const previous = found.get(entry.name);
        if (previous) throw new Error(`two Lua scripts named ${entry.name}: ${previous} and ${path}`);
        found.set(entry.name, path);
      }
    }
  };
  walk(SOURCE_ROOT);
  cached = found;
  return found;
}

function loadScripts(): Script[] {
  return (loaded ??= [...scriptFiles().keys()].map((file) => {
    // <command>-<numKeys>.lua, or <command>.lua for a variable key count (passed first at call time).
    const match = /^(.+?)(?:-(\d+))?\.lua$/.exec(file)!;
    const name = match[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const numberOfKeys = match[2] === undefined ? undefined : Number(match[2]);
    return { name, numberOfKeys, lua: scriptSource(file) };
  }));
}

/**
 * The text Redis runs for the script named `file` (e.g. "reliable-fetch.lua"). Lua shared by several
 * scripts lives in a `lib/` folder beside them and is pasted in where a script says
 * `-- include: lib/<name>.lua`, relative to the script's own folder (`../lib/<name>.lua` for a family's
 * shared lib one folder up, `../../server/lib/<name>.lua` for a feature reusing the core's; Redis runs
 * each script alone: there is no `require`).
 */
export function scriptSource(file: string): string {
  const path = scriptFiles().get(basename(file));
  if (!path) throw new Error(`no Lua script named ${file} under ${SOURCE_ROOT}`);
  return readFileSync(path, "utf8").replace(
    /^-- include: ((?:\.\.\/)*(?:[\w-]+\/)*lib\/[\w-]+\.lua)$/gm,
    (_, lib: string) => readFileSync(join(dirname(path), lib), "utf8"),
  );
}

export function defineScripts(redis: Redis): TsqRedis {
  for (const script of loadScripts()) {
    redis.defineCommand(
      script.name,
      script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua },
    );
  }
  return redis as TsqRedis;
}
