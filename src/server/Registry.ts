/**
 * The job registry: the only classes this process will ever run. A payload names a class by a plain
 * string; it is looked up here and never resolved to a module path, so a payload cannot choose code.
 */
import { ConfigError } from "../wire/errors.js";
import { importJobModule } from "./jobModule.js";
import type { JobOptions } from "../client/options.js";
import type { JobOptionKeys } from "../client/jobOptionKeys.js";
import { workerAttributes, type WorkerAttributes } from "../platform/attributes/attributes.js";

/** What a job class builds: anything with a `perform` method. */
export interface JobInstance {
  perform(...args: unknown[]): unknown;
}

/** Anything with a `perform` method on its prototype; extending `Job` is not required. */
export interface RunnableClass {
  // Constructor parameters are allowed (dependency injection builds such classes through the worker's
  // jobFactory); without a factory tsq constructs with none.
  new (...args: never[]): JobInstance;
  readonly name: string;
  readonly jobName?: string;
  readonly options?: JobOptions;
  retryIn?(count: number, error: Error, job: Record<string, unknown>): unknown;
  retriesExhausted?(job: Record<string, unknown>, error: Error): unknown;
}

export function isRunnable(value: unknown): value is RunnableClass {
  if (typeof value !== "function") return false;
  const proto = (value as { prototype?: { perform?: unknown } }).prototype;
  return proto !== undefined && typeof proto.perform === "function";
}

export class Registry {
  private readonly classes = new Map<string, RunnableClass>();

  /** Registers a class under its `static jobName` or class name. */
  register(klass: RunnableClass): string {
    if (!isRunnable(klass)) throw new ConfigError(`cannot register ${String(klass)}: it has no perform() method`);
    const name = klass.jobName ?? klass.name;
    if (!name) throw new ConfigError("cannot register an anonymous job class; give it a name or a static jobName");
    const existing = this.classes.get(name);
    if (existing && existing !== klass) {
      throw new ConfigError(`two different job classes are named ${name}; give one a distinct static jobName`);
    }
    // Checked here, at startup: a bad attribute (memory-bound + high urgency, a typo) names the class now,
    // not at its first push.
    workerAttributes(klass, name);
    this.classes.set(name, klass);
    return name;
  }

  /** Refuses the first class whose options hold a near miss of an option `keys` knows (a worker's plug-ins'). */
  checkOptions(keys: JobOptionKeys): void {
    for (const [name, klass] of this.classes) {
      const typo = keys.typo(name, klass.options, "static options");
      if (typo) throw new ConfigError(typo);
    }
  }

  /** Imports a job module and registers every export whose prototype has `perform`. */
  async load(modulePath: string): Promise<string[]> {
    const exports = await importJobModule(modulePath);
    const names: string[] = [];
    for (const value of Object.values(exports)) {
      if (isRunnable(value)) names.push(this.register(value));
    }
    return [...new Set(names)];
  }

  get(name: string): RunnableClass | undefined {
    return this.classes.get(name);
  }

  /** Every registered class. */
  all(): RunnableClass[] {
    return [...new Set(this.classes.values())];
  }

  /** The checked worker attributes of a registered class. */
  attributes(name: string): WorkerAttributes | undefined {
    const klass = this.classes.get(name);
    return klass ? workerAttributes(klass, name) : undefined;
  }

  names(): string[] {
    return [...this.classes.keys()].sort();
  }

  /** Queues named by registered classes' `static options.queue` (the cluster's "known queues"). */
  declaredQueues(): string[] {
    const queues = new Set<string>();
    for (const klass of this.classes.values()) {
      const queue = klass.options?.queue;
      if (typeof queue === "string" && queue !== "") queues.add(queue);
    }
    return [...queues].sort();
  }
}
