/**
 * Values one worker keeps for its whole life that a role or plug-in makes on first use: the paused
 * queues its capsules share, the concurrency limiter two plug-ins share. They live on the worker's
 * context (`ctx.locals`), never in a module: two workers in one process each get their own, and a
 * stopped worker's go with it.
 *
 *   const LIMITER = workerLocal<ConcurrencyLimiter>("concurrency limiter");
 *   const limiter = ctx.locals.get(LIMITER, () => new ConcurrencyLimiter(ctx.redis, ...));
 *
 * A key is a constant (it holds no value), so the module that declares it keeps no state.
 */

/** Names one per-worker value of type T. Compared by identity: make one per value, at module level. */
export interface WorkerLocal<T> {
  readonly name: string;
  /** Never set: carries T, so `get` returns what `create` made without a cast at the call. */
  readonly type?: T;
}

export function workerLocal<T>(name: string): WorkerLocal<T> {
  return Object.freeze({ name });
}

export class WorkerLocals {
  private readonly values = new Map<WorkerLocal<unknown>, unknown>();

  /** The worker's value for `key`, made by `create` at the first call (later calls get the same one). */
  get<T>(key: WorkerLocal<T>, create: () => T): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const value = create();
    this.values.set(key, value);
    return value;
  }
}
