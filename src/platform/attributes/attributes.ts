/**
 * Worker attributes: what a job class says about itself, as GitLab's `worker_attributes.rb` lets a
 * worker declare (`urgency :high`, `worker_resource_boundary :cpu`, `feature_category :x`, ...). They are
 * static fields, on a `Job` subclass or on any registered class with `perform`:
 *
 *   export class ExportWorker extends Job {
 *     static urgency = "throttled";
 *     static resourceBoundary = "memory";
 *     static featureCategory = "importers";
 *     static externalDependencies = true;
 *     static tags = ["exclude_from_kubernetes"];
 *     static version = 2;
 *     perform(...) {}
 *   }
 *
 * They are read once per class and checked then: a bad value, or memory-bound + high urgency (which
 * GitLab forbids: a high-urgency queue must not be starved by a memory hog), throws a ConfigError naming
 * the class. The worker checks every class of its job module at startup (Registry.register).
 */
import { ConfigError } from "../../wire/errors.js";

export const URGENCIES = ["high", "low", "throttled"] as const;
export const RESOURCE_BOUNDARIES = ["cpu", "memory", "unknown"] as const;
export type Urgency = (typeof URGENCIES)[number];
export type ResourceBoundary = (typeof RESOURCE_BOUNDARIES)[number];

/** The static fields a class may declare, as a type for `satisfies` or documentation. */
export interface WorkerAttributeFields {
  urgency?: Urgency;
  resourceBoundary?: ResourceBoundary;
  featureCategory?: string;
  externalDependencies?: boolean;
  /** Safe to run twice with the same arguments (GitLab `idempotent!`); deduplication builds on it. */
  idempotent?: boolean;
  /** Free-form labels for queries (`tags=...`); not Sidekiq's per-job `options.tags`. */
  tags?: readonly string[];
  /** GitLab's `weight` (default 1): shown by `tsqctl workers`; like GitLab's sidekiq-cluster, groups ignore it. */
  weight?: number;
  /** GitLab's job version: written to the payload's `version`, read back as `this.jobVersion`. */
  version?: number;
  /** GitLab `queue_namespace`: the generated queue name becomes `<namespace>:<name>`. */
  queueNamespace?: string;
}

/** Every attribute of a class, defaults filled in. */
export interface WorkerAttributes {
  /** The class's name on the wire (`static jobName` or the class name). */
  workerName: string;
  urgency: Urgency;
  resourceBoundary: ResourceBoundary;
  featureCategory: string | undefined;
  externalDependencies: boolean;
  idempotent: boolean;
  tags: readonly string[];
  weight: number;
  version: number | undefined;
  queueNamespace: string | undefined;
  /** The queue the class declares in `static options.queue`, if any. */
  declaredQueue: string | undefined;
}

/** What attributes are read from: a class (its name and static fields). */
export type AttributeSource = { readonly name: string } & object;

/** A feature category, namespace or tag: GitLab's query grammar allows word characters only (and `:`). */
const WORD = /^\w+$/;
const NAMESPACE = /^[\w:]+$/;

const cache = new WeakMap<object, WorkerAttributes>();

/**
 * The attributes of `klass`, checked (cached per class). `workerName` is its wire name. Throws a
 * ConfigError naming the class for a bad value or a combination GitLab forbids.
 */
export function workerAttributes(klass: AttributeSource, workerName?: string): WorkerAttributes {
  const cached = cache.get(klass);
  if (cached) return cached;
  const fields = klass as Record<string, unknown>;
  const name = workerName ?? (typeof fields.jobName === "string" ? fields.jobName : klass.name);
  const check = new Checker(name, fields);
  const attributes: WorkerAttributes = Object.freeze({
    workerName: name,
    urgency: check.oneOf("urgency", URGENCIES) ?? "low",
    resourceBoundary: check.oneOf("resourceBoundary", RESOURCE_BOUNDARIES) ?? "unknown",
    featureCategory: check.word("featureCategory", WORD),
    externalDependencies: check.boolean("externalDependencies") ?? false,
    idempotent: check.boolean("idempotent") ?? false,
    tags: Object.freeze(check.tags()),
    weight: check.integer("weight", 1) ?? 1,
    version: check.integer("version", 0),
    queueNamespace: check.word("queueNamespace", NAMESPACE),
    declaredQueue: declaredQueue(fields.options),
  });
  if (attributes.urgency === "high" && attributes.resourceBoundary === "memory") {
    throw new ConfigError(
      `job class ${name} is memory-bound with high urgency, which is not allowed: a memory-bound job cannot ` +
        'meet high-urgency latency targets; lower its urgency to "low" or "throttled", or make it use less memory',
    );
  }
  cache.set(klass, attributes);
  return attributes;
}

/** Default attributes for a class known only by name (a push of `"SomeRubyWorker"`). */
export function attributesOfName(workerName: string): WorkerAttributes {
  return {
    workerName,
    urgency: "low",
    resourceBoundary: "unknown",
    featureCategory: undefined,
    externalDependencies: false,
    idempotent: false,
    tags: [],
    weight: 1,
    version: undefined,
    queueNamespace: undefined,
    declaredQueue: undefined,
  };
}

/**
 * GitLab's generated queue name: the worker name without a trailing "Worker", underscored, `::` as `_`,
 * prefixed by the namespace (`WorkerRouter.queue_name_from_worker_name`). `Ci::BuildFinishedWorker` with
 * namespace `pipeline_processing` is `pipeline_processing:ci_build_finished`.
 */
export function generatedQueueName(attributes: WorkerAttributes): string {
  const base = attributes.workerName
    .replace(/Worker$/, "")
    .split("::")
    .map((part) => part.replace(/([a-z\d])([A-Z])/g, "$1_$2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2"))
    .join("_")
    .toLowerCase();
  return attributes.queueNamespace === undefined ? base : `${attributes.queueNamespace}:${base}`;
}

function declaredQueue(options: unknown): string | undefined {
  if (options === null || typeof options !== "object") return undefined;
  const queue = (options as { queue?: unknown }).queue;
  return typeof queue === "string" && queue !== "" ? queue : undefined;
}

/** Reads one static field at a time and fails with the class, the field and what was expected. */
class Checker {
  constructor(
    private readonly className: string,
    private readonly fields: Record<string, unknown>,
  ) {}

  oneOf<T extends string>(field: string, allowed: readonly T[]): T | undefined {
    const value = this.fields[field];
    if (value === undefined) return undefined;
    if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
    return this.fail(
      field,
      allowed
        .map((a) => JSON.stringify(a))
        .join(", ")
        .replace(/, ([^,]*)$/, " or $1"),
      value,
    );
  }

  word(field: string, format: RegExp): string | undefined {
    const value = this.fields[field];
    if (value === undefined) return undefined;
    if (typeof value === "string" && format.test(value)) return value;
    return this.fail(field, 'a name of letters, digits and underscores, e.g. "source_code_management"', value);
  }

  boolean(field: string): boolean | undefined {
    const value = this.fields[field];
    if (value === undefined || typeof value === "boolean") return value;
    return this.fail(field, "true or false", value);
  }

  integer(field: string, minimum: number): number | undefined {
    const value = this.fields[field];
    if (value === undefined) return undefined;
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= minimum) return value;
    return this.fail(field, `a whole number >= ${minimum}`, value);
  }

  tags(): string[] {
    const value = this.fields.tags;
    if (value === undefined) return [];
    if (Array.isArray(value) && value.every((tag) => typeof tag === "string" && WORD.test(tag))) {
      return [...new Set(value as string[])];
    }
    return this.fail("tags", 'a list of names of letters, digits and underscores, e.g. ["git_access"]', value);
  }

  private fail(field: string, expected: string, value: unknown): never {
    let shown: string;
    try {
      shown = JSON.stringify(value) ?? String(value);
    } catch {
      shown = String(value);
    }
    throw new ConfigError(`job class ${this.className}: static ${field} must be ${expected}, got ${shown}`);
  }
}
