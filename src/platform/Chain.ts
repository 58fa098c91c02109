/**
 * An ordered middleware chain, Sidekiq's API (`add`, `prepend`, `insertBefore`, `insertAfter`,
 * `remove`). An entry is either a class whose instances have a `call` method (a fresh instance is built
 * for every invocation, as Sidekiq does) or a plain function. A middleware that never calls `next()`
 * stops the chain: the client does not push, the server treats the job as done.
 */

export type Next = () => Promise<void>;

/** A middleware class: constructed with the arguments given to `add`, then `call(...args, next)`. */
export interface MiddlewareClass<A extends unknown[]> {
  // Constructor arguments are whatever the user passed to `add`; they are opaque to the chain.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  new (...options: any[]): { call(...args: [...A, Next]): unknown };
}
export type MiddlewareFunction<A extends unknown[]> = (...args: [...A, Next]) => unknown;
export type Middleware<A extends unknown[]> = MiddlewareClass<A> | MiddlewareFunction<A>;

interface Entry<A extends unknown[]> {
  middleware: Middleware<A>;
  options: unknown[];
}

function isClass<A extends unknown[]>(m: Middleware<A>): m is MiddlewareClass<A> {
  const proto = (m as { prototype?: { call?: unknown } }).prototype;
  return proto !== undefined && typeof proto.call === "function";
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

export class Chain<A extends unknown[]> {
  private entries: Entry<A>[] = [];

  /** Appends (moving it to the end if already present). */
  add(middleware: Middleware<A>, ...options: unknown[]): this {
    this.remove(middleware);
    this.entries.push({ middleware, options });
    return this;
  }

  prepend(middleware: Middleware<A>, ...options: unknown[]): this {
    this.remove(middleware);
    this.entries.unshift({ middleware, options });
    return this;
  }

  insertBefore(existing: Middleware<A>, middleware: Middleware<A>, ...options: unknown[]): this {
    return this.insertAt(existing, 0, middleware, options);
  }

  insertAfter(existing: Middleware<A>, middleware: Middleware<A>, ...options: unknown[]): this {
    return this.insertAt(existing, 1, middleware, options);
  }

  remove(middleware: Middleware<A>): this {
    this.entries = this.entries.filter((e) => e.middleware !== middleware);
    return this;
  }

  has(middleware: Middleware<A>): boolean {
    return this.entries.some((e) => e.middleware === middleware);
  }

  clear(): this {
    this.entries = [];
    return this;
  }

  get size(): number {
    return this.entries.length;
  }

  list(): Middleware<A>[] {
    return this.entries.map((e) => e.middleware);
  }

  /** The entries with the options each was added with, in order. */
  entriesList(): { middleware: Middleware<A>; options: unknown[] }[] {
    return this.entries.map((e) => ({ middleware: e.middleware, options: [...e.options] }));
  }

  /** A copy with the same entries, for per-capsule chains. */
  copy(): Chain<A> {
    const chain = new Chain<A>();
    chain.entries = [...this.entries];
    return chain;
  }

  /**
   * Runs every middleware, then `last`. Resolves true when `last` ran, false when a middleware stopped
   * the chain by not calling `next()`. No async function per step: a middleware's own promise is passed
   * on as it is, since each extra promise costs every job a hook call while a job's log context is on.
   */
  invoke(args: A, last: () => Promise<unknown>): Promise<boolean> {
    let ran = false;
    const step = (index: number): Promise<unknown> => {
      const entry = this.entries[index];
      let nextCalled = false;
      const next: Next = () => {
        if (nextCalled) throw new Error("middleware called next() twice");
        nextCalled = true;
        return step(index + 1) as Promise<void>;
      };
      try {
        if (!entry) {
          ran = true;
          return last();
        }
        const m = entry.middleware;
        const result = isClass(m) ? new m(...entry.options).call(...args, next) : m(...args, next);
        return isThenable(result) ? Promise.resolve(result) : Promise.resolve();
      } catch (error) {
        // A throw before any promise (a plain function, a constructor) rejects with what was thrown, as
        // an async step did.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on unchanged
        return Promise.reject(error);
      }
    };
    return step(0).then(() => ran);
  }

  private insertAt(existing: Middleware<A>, offset: 0 | 1, middleware: Middleware<A>, options: unknown[]): this {
    // Check before removing, so a failed insert leaves the chain unchanged.
    const name = existing.name || "(anonymous)";
    if (!this.has(existing)) throw new Error(`middleware ${name} is not in the chain`);
    if (existing === middleware) throw new Error(`middleware ${name} cannot be inserted relative to itself`);
    this.remove(middleware);
    const index = this.entries.findIndex((e) => e.middleware === existing);
    this.entries.splice(index + offset, 0, { middleware, options });
    return this;
  }
}
