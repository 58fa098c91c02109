/**
 * What a config file may set (FileSettings) and the check of each key (FILE_SCHEMA), both in camelCase:
 * the file's `dead_max_jobs` is `deadMaxJobs` here. loadConfig.ts reads the file and applies the schema;
 * each check fails with a ConfigError naming the file, the key and what is expected.
 */
import { ConfigError } from "../../wire/errors.js";
import type { SidekiqVersionSetting } from "../../wire/sidekiqVersion.js";
import { redactUrl } from "../redis/connection.js";
import { isRedisUrl, REDIS_URL_FORMAT } from "../redis/redisUrl.js";
import { redisSection } from "./redisSection.js";
import { shardsSection } from "./shardsSection.js";
import type { ShardConfig } from "../shards/ShardMap.js";
import type { FetchMode, QueueSpec } from "./options.js";
import type { CronEntry } from "./cronEntry.js";
import { cronSection } from "./cronSection.js";
import { queueList } from "./queueList.js";
import { WorkerRouter, type RoutingRule } from "../attributes/WorkerRouter.js";
import {
  type Where,
  type Schema,
  applySchema,
  entriesOf,
  fail,
  show,
  bounded,
  port,
  nonEmptyString,
  stringList,
  nested,
  boolean,
} from "./checks.js";

export interface MetricsFileConfig {
  /** TCP port for GET /metrics; 0 = off. */
  port?: number;
  host?: string;
}

/** The `cluster:` section, checked for shape only; the supervisor applies its own defaults. */
export interface ClusterFileConfig {
  processes?: number;
  groups?: string[];
  /** Resident memory in MB above which a child is replaced. */
  maxMemoryMb?: number;
  /** Seconds without a heartbeat after which a child counts as hung. */
  hangThreshold?: number;
  /** Abandoned jobs still running at which a child is replaced; 0 = never. */
  maxAbandoned?: number;
  /** Most job slots per child sized from its group (`-m`); 0 = no maximum. */
  maxConcurrency?: number;
  /** Fewest job slots per child sized from its group (`--min-concurrency`). */
  minConcurrency?: number;
  metrics?: MetricsFileConfig;
}

export interface CapsuleFileConfig {
  name: string;
  /** Undefined: the resolved top-level concurrency applies, as for a Sidekiq 7 `config.capsule`. */
  concurrency: number | undefined;
  queues: QueueSpec[];
}

/** What a config file may set, in camelCase. Absent fields fall through to the environment and DEFAULTS. */
export interface FileSettings {
  require?: string;
  concurrency?: number;
  /** Seconds. */
  timeout?: number;
  queues?: QueueSpec[];
  capsules?: CapsuleFileConfig[];
  tag?: string;
  labels?: string[];
  redisUrl?: string;
  /** The `redis:` block (url or sentinel, credentials, TLS files) as one Redis URL. */
  redis?: string;
  fetch?: FetchMode;
  maxRetries?: number;
  deadMaxJobs?: number;
  /** Seconds. */
  deadTimeoutInSeconds?: number;
  /** Seconds. */
  averageScheduledPollInterval?: number;
  /** Seconds; null = scale with the process count (the default). */
  pollIntervalAverage?: number | null;
  /** Seconds. */
  heartbeatInterval?: number;
  heartbeatTtl?: number;
  poisonPillRecoveries?: number;
  poisonPillWindow?: number;
  sidekiqVersion?: SidekiqVersionSetting;
  /** Bytes. */
  maxPayloadBytes?: number;
  /** Bytes; 0 = never compress. */
  compressThresholdBytes?: number;
  /** Bytes. */
  maxInflatedBytes?: number;
  metrics?: MetricsFileConfig;
  cluster?: ClusterFileConfig;
  /** Periodic job schedules, in file order; expressions and time zones already checked. */
  cron?: CronEntry[];
  /** `[query, queue]` pairs, queries already parsed once to catch mistakes. */
  routingRules?: RoutingRule[];
  /** Redis servers that own some queues each (src/platform/shards); the top-level Redis is the "default" one. */
  shards?: ShardConfig[];
  /** Write Sidekiq's per-class metrics keys (in `sidekiq_version`'s layout). */
  executionMetrics?: boolean;
  /** Distinct values per metrics label (class, queue), 1 to 10,000. */
  metricsMaxLabelValues?: number;
  /** The plug-ins' settings the file gives (settings.ts), by option key: not part of FILE_SCHEMA. */
  features?: Readonly<Record<string, number | string | boolean>>;
}

function capsules(value: unknown, at: Where): CapsuleFileConfig[] {
  return entriesOf(value, at).map(({ key, value: body, path }) => {
    if (key === "default") {
      throw new ConfigError(
        `${at.file}: ${path} is the capsule built from the top-level queues and concurrency; give this one another name`,
      );
    }
    const settings = applySchema(entriesOf(body, { file: at.file, path }), CAPSULE, at.file);
    if (settings.queues === undefined) {
      throw new ConfigError(
        `${at.file}: ${path}.queues is missing; list the queues this capsule works, e.g. queues: [${key}]`,
      );
    }
    return { name: key, concurrency: settings.concurrency, queues: settings.queues };
  });
}

function groups(value: unknown, at: Where): string[] {
  const list = stringList(value, at);
  return list.length > 0 ? list : fail(at, 'a non-empty list of queue groups, e.g. ["critical,default", "*"]', value);
}

function redisUrl(value: unknown, at: Where): string {
  if (typeof value === "string" && isRedisUrl(value)) return value;
  const shown = typeof value === "string" ? redactUrl(value) : show(value);
  throw new ConfigError(`${at.file}: ${at.path} must be ${REDIS_URL_FORMAT}, got ${shown}`);
}

function fetchMode(value: unknown, at: Where): FetchMode {
  return value === "basic" || value === "reliable" ? value : fail(at, '"basic" or "reliable"', value);
}

function sidekiqVersion(value: unknown, at: Where): SidekiqVersionSetting {
  return value === "auto" || value === 6 || value === 7 || value === 8 ? value : fail(at, "auto, 6, 7 or 8", value);
}

/** `routing_rules:` is a list of `[query, queue]` pairs; queue null or "" means the generated name. */
function routingRules(value: unknown, at: Where): RoutingRule[] {
  if (value === null) return []; // `routing_rules:` with nothing under it
  if (!Array.isArray(value))
    return fail(at, 'a list of [query, queue] pairs, e.g. [["urgency=high", "urgent"], ["*", "default"]]', value);
  const rules = value.map((item: unknown, index): RoutingRule => {
    const ok = Array.isArray(item) && item.length === 2 && typeof item[0] === "string";
    const queue: unknown = ok ? item[1] : undefined;
    if (!ok || (queue !== null && typeof queue !== "string")) {
      return fail(
        { ...at, path: `${at.path}[${index}]` },
        'a [query, queue] pair, e.g. ["resource_boundary=cpu", "cpu_boundary"]',
        item,
      );
    }
    return [item[0] as string, queue];
  });
  new WorkerRouter(rules, `${at.file}: ${at.path}`); // parses every query: a bad one fails here, naming the rule
  return rules;
}

const CAPSULE: Schema<{ concurrency?: number; queues?: QueueSpec[] }> = {
  concurrency: bounded("concurrency"),
  queues: queueList,
};

const METRICS: Schema<MetricsFileConfig> = { port, host: nonEmptyString };

const CLUSTER: Schema<ClusterFileConfig> = {
  processes: bounded("processes"),
  groups,
  maxMemoryMb: bounded("maxMemoryMb"),
  hangThreshold: bounded("hangThreshold"),
  maxAbandoned: bounded("maxAbandoned"),
  maxConcurrency: bounded("maxConcurrency"),
  minConcurrency: bounded("minConcurrency"),
  metrics: nested(METRICS),
};

/**
 * Every top-level key of the core a file may set (a plug-in's settings are checked by loadConfig); any
 * other top-level mapping is an environment section.
 */
export const FILE_SCHEMA: Schema<Omit<FileSettings, "features">> = {
  require: nonEmptyString,
  concurrency: bounded("concurrency"),
  timeout: bounded("timeout"),
  queues: queueList,
  capsules,
  tag: nonEmptyString,
  labels: stringList,
  redisUrl,
  redis: redisSection,
  fetch: fetchMode,
  maxRetries: bounded("maxRetries"),
  deadMaxJobs: bounded("deadMaxJobs"),
  deadTimeoutInSeconds: bounded("deadTimeoutInSeconds"),
  averageScheduledPollInterval: bounded("averageScheduledPollInterval"),
  pollIntervalAverage: (value, at) => (value === null ? null : bounded("pollIntervalAverage")(value, at)),
  heartbeatInterval: bounded("heartbeatInterval"),
  heartbeatTtl: bounded("heartbeatTtl"),
  poisonPillRecoveries: bounded("poisonPillRecoveries"),
  poisonPillWindow: bounded("poisonPillWindow"),
  sidekiqVersion,
  maxPayloadBytes: bounded("maxPayloadBytes"),
  compressThresholdBytes: bounded("compressThresholdBytes"),
  maxInflatedBytes: bounded("maxInflatedBytes"),
  metrics: nested(METRICS),
  cluster: nested(CLUSTER),
  cron: cronSection,
  routingRules,
  shards: shardsSection,
  executionMetrics: boolean,
  metricsMaxLabelValues: bounded("metricsMaxLabelValues"),
};
