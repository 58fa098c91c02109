import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import {
  BOUNDS,
  MAX_CONCURRENCY,
  MAX_TIMER_MS,
  describeBound,
  type Bound,
  type BoundName,
} from "../../../src/platform/config/bounds.js";
import { builtinPlugins } from "../../../src/plugins.js";
import { settingsOf } from "../../../src/server/plugin.js";
import { resolveWorkerOptions, UsageError } from "../../../src/options/workerOptions.js";
import { resolveClusterOptions } from "../../../src/options/clusterOptions.js";
import { workerOptionsOf } from "../../../src/library/workerConfig.js";
import { ArgumentError, ConfigError } from "../../../src/wire/errors.js";

const dir = mkdtempSync(join(tmpdir(), "tsq-bounds-"));
/** The built-in features' settings, whose keys a file may hold where they run (as the CLI reads it). */
const FEATURES = settingsOf(builtinPlugins());
/** A feature setting's bound, by option key. */
function featureBound(key: string): Bound {
  const bound = FEATURES.find((setting) => setting.key === key)?.bound;
  assert.ok(bound, `no built-in feature declares a numeric ${key}`);
  return bound;
}
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function load(text: string): unknown {
  const path = join(dir, `config-${++files}.yml`);
  writeFileSync(path, text);
  return loadConfig(path, "development", "config/tsq.yml", FEATURES);
}

function refused(text: string, message: string | RegExp): void {
  assert.throws(
    () => load(text),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      if (typeof message === "string") assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    },
  );
}

/** Every numeric key of a config file, as YAML wants it, with its bound (BOUNDS, or its feature's setting). */
const KEYS: [yaml: (value: string) => string, path: string, bound: Bound][] = [
  ...(
    [
      ["concurrency", "concurrency"],
      ["timeout", "timeout"],
      ["heartbeat_interval", "heartbeatInterval"],
      ["heartbeat_ttl", "heartbeatTtl"],
      ["average_scheduled_poll_interval", "averageScheduledPollInterval"],
      ["poll_interval_average", "pollIntervalAverage"],
      ["max_retries", "maxRetries"],
      ["dead_max_jobs", "deadMaxJobs"],
      ["dead_timeout_in_seconds", "deadTimeoutInSeconds"],
      ["poison_pill_recoveries", "poisonPillRecoveries"],
      ["poison_pill_window", "poisonPillWindow"],
      ["max_payload_bytes", "maxPayloadBytes"],
      ["compress_threshold_bytes", "compressThresholdBytes"],
      ["max_inflated_bytes", "maxInflatedBytes"],
      ["metrics_max_label_values", "metricsMaxLabelValues"],
    ] as const
  ).map(([key, name]): [(value: string) => string, string, Bound] => [(v) => `${key}: ${v}`, key, BOUNDS[name]]),
  // The features' own, declared by their plug-ins.
  ...(
    [
      ["kill_switch_refresh_interval", "killSwitchRefreshInterval"],
      ["leader_ttl", "leaderTtl"],
      ["leader_renew_interval", "leaderRenewInterval"],
      ["leader_check_interval", "leaderCheckInterval"],
      ["cron_grace_period", "cronGracePeriod"],
      ["sidekiq_cron_poll_interval", "sidekiqCronPollInterval"],
      ["concurrency_limit_max_parked", "concurrencyLimitMaxParked"],
    ] as const
  ).map(([key, name]): [(value: string) => string, string, Bound] => [(v) => `${key}: ${v}`, key, featureBound(name)]),
  ...(["processes", "max_memory_mb", "hang_threshold", "max_concurrency", "min_concurrency"] as const).map(
    (key): [(value: string) => string, string, Bound] => [
      (v) => `cluster: { ${key}: ${v} }`,
      `cluster.${key}`,
      BOUNDS[key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as BoundName],
    ],
  ),
  [
    (v) => `capsules: { serial: { concurrency: ${v}, queues: [serial] } }`,
    "capsules.serial.concurrency",
    BOUNDS.concurrency,
  ],
  [(v) => `redis: { url: "redis://127.0.0.1:6390", db: ${v} }`, "redis.db", BOUNDS.db],
];

describe("every numeric config key has an upper bound", () => {
  test("the examples from the report are refused, naming the key and the range", () => {
    refused(
      "heartbeat_interval: 3000000",
      "config/tsq.yml: heartbeat_interval must be a number of seconds above 0 and at most 86400, got 3000000",
    );
    refused(
      "timeout: 3000000",
      "config/tsq.yml: timeout must be a number of seconds above 0 and at most 86400, got 3000000",
    );
    refused(
      "concurrency: 100000000",
      "config/tsq.yml: concurrency must be an integer from 1 to 10000 (job slots), got 100000000",
    );
  });

  for (const [yaml, path, bound] of KEYS) {
    test(`${path}: the largest allowed value loads, one more is refused`, () => {
      load(yaml(String(bound.max)));
      const over = bound.integer ? bound.max + 1 : bound.max + 0.5;
      refused(yaml(String(over)), `config/tsq.yml: ${path} must be ${describeBound(bound)}, got ${over}`);
    });
  }

  test("queue weights are bounded too (a weighted capsule repeats each queue `weight` times)", () => {
    load("queues: [[a, 1000], b]");
    refused(
      "queues: [[a, 1000000000], b]",
      /^config\/tsq\.yml: queues\[0\] must be .*from 1 to 1000.* got \["a",1000000000\]$/,
    );
    refused('queues: ["a,1001"]', /^config\/tsq\.yml: queues\[0\] must be .*from 1 to 1000/);
  });

  test("settings that become a timer stay below Node's 2^31-1 ms limit", () => {
    const timers: BoundName[] = [
      "timeout",
      "heartbeatInterval",
      "heartbeatTtl",
      "fetchTimeout",
      "averageScheduledPollInterval",
      "pollIntervalAverage",
      "hangThreshold",
    ];
    for (const name of timers) assert.ok(BOUNDS[name].max * 1000 <= MAX_TIMER_MS, name);
    const features = [
      "killSwitchRefreshInterval",
      "leaderTtl",
      "leaderRenewInterval",
      "leaderCheckInterval",
      "cronGracePeriod",
      "sidekiqCronPollInterval",
    ];
    for (const name of features) assert.ok(featureBound(name).max * 1000 <= MAX_TIMER_MS, name);
  });
});

describe("YAML's .nan and .inf are named in the message", () => {
  test("not rendered as null", () => {
    refused(
      "heartbeat_interval: .nan",
      "config/tsq.yml: heartbeat_interval must be a number of seconds above 0 and at most 86400, got NaN",
    );
    refused(
      "timeout: .inf",
      "config/tsq.yml: timeout must be a number of seconds above 0 and at most 86400, got Infinity",
    );
    refused(
      "concurrency: -.inf",
      "config/tsq.yml: concurrency must be an integer from 1 to 10000 (job slots), got -Infinity",
    );
    refused("cluster: { max_memory_mb: .inf }", /cluster\.max_memory_mb must be .*, got Infinity$/);
    refused("redis: { url: redis://127.0.0.1:6390, db: .nan }", /redis\.db must be .*, got NaN$/);
  });
});

describe("flags and environment get the same bounds", () => {
  function usage(argv: string[], message: RegExp): void {
    assert.throws(
      () => resolveWorkerOptions(argv, {}, dir),
      (error: unknown) => error instanceof UsageError && message.test(error.message),
    );
  }
  test("-t 3000000 and -c 100000000 are refused with the range", () => {
    usage(
      ["-t", "3000000"],
      /^option '-t, --timeout <seconds>' argument '3000000' is invalid\. Expected a number of seconds above 0 and at most 86400\.$/,
    );
    usage(
      ["-c", "100000000"],
      /^option '-c, --concurrency <n>' argument '100000000' is invalid\. Expected an integer from 1 to 10000 \(job slots\)\.$/,
    );
    usage(["-q", "a,1001"], /argument 'a,1001' is invalid/);
    usage(["-t", "Infinity"], /argument 'Infinity' is invalid/);
    assert.equal(resolveWorkerOptions(["-t", "86400", "-c", "10000"], {}, dir).options.timeout, 86_400);
  });

  test("TSQ_TIMEOUT and TSQ_CONCURRENCY are bounded", () => {
    assert.throws(
      () => resolveWorkerOptions([], { TSQ_TIMEOUT: "3000000" }, dir),
      new ConfigError(
        'TSQ_TIMEOUT must be a number of seconds above 0 and at most 86400, got "3000000"; fix or unset it',
      ),
    );
    assert.throws(
      () => resolveWorkerOptions([], { TSQ_CONCURRENCY: "100000000" }, dir),
      /^ConfigError: TSQ_CONCURRENCY must be an integer from 1 to 10000/,
    );
  });

  test("tsq-cluster's own flags", () => {
    const cluster = (argv: string[], message: RegExp) =>
      assert.throws(
        () => resolveClusterOptions(argv, {}, dir),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
      );
    cluster(
      ["--processes", "100000"],
      /'--processes <n>' argument '100000' is invalid\. Expected an integer from 1 to 1024/,
    );
    cluster(
      ["--hang-threshold", "3000000"],
      /argument '3000000' is invalid\. Expected a number of seconds above 0 and at most 86400/,
    );
    cluster(["-m", "100000000"], /argument '100000000' is invalid\. Expected an integer from 0 to 10000/);
    cluster(
      ["--min-concurrency", "100000000"],
      /argument '100000000' is invalid\. Expected an integer from 0 to 10000/,
    );
    cluster(["--max-memory", "1e9"], /argument '1e9' is invalid\. Expected a number of MB above 0 and at most 1048576/);
  });
});

describe("new Worker uses the same bounds", () => {
  test("one concurrency limit for the CLI, the config file and Worker", () => {
    assert.equal(BOUNDS.concurrency.max, MAX_CONCURRENCY);
    assert.throws(
      () => workerOptionsOf({ concurrency: MAX_CONCURRENCY + 1 }),
      (error: unknown) => error instanceof ArgumentError && /concurrency.*from 1 to 10000/.test(error.message),
    );
    workerOptionsOf({ concurrency: MAX_CONCURRENCY });
  });

  test("timeout and the options escape hatch are bounded, NaN named", () => {
    assert.throws(
      () => workerOptionsOf({ timeout: 3_000_000 }),
      /`timeout` must be a number from 0 to 86400, got 3000000/,
    );
    assert.throws(
      () => workerOptionsOf({ options: { heartbeatInterval: 3_000_000 } }),
      /`options\.heartbeatInterval` must be a number of seconds above 0 and at most 86400, got 3000000/,
    );
    assert.throws(
      () => workerOptionsOf({ options: { heartbeatInterval: NaN } }),
      /`options\.heartbeatInterval` must be .*, got NaN$/,
    );
    const options = workerOptionsOf({
      options: { heartbeatInterval: 5, pollIntervalAverage: null },
    });
    assert.equal(options.heartbeatInterval, 5);
  });
});
