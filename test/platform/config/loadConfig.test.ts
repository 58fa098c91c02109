import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type FileSettings } from "../../../src/platform/config/loadConfig.js";
import { parseQueueText } from "../../../src/platform/config/queueList.js";
import { ConfigError } from "../../../src/wire/errors.js";

const dir = mkdtempSync(join(tmpdir(), "tsq-loadConfig-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes `text` to a fresh file and returns its path. */
function writeConfig(text: string): string {
  const path = join(dir, `config-${++files}.yml`);
  writeFileSync(path, text);
  return path;
}

/** Loads `text` as `config/tsq.yml` in the given environment. */
function load(text: string, environment = "development"): FileSettings {
  return loadConfig(writeConfig(text), environment, "config/tsq.yml");
}

/** Asserts that loading `text` fails with a ConfigError whose message matches `message`. */
function rejects(text: string, message: RegExp | string, environment = "development"): void {
  assert.throws(
    () => load(text, environment),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      if (typeof message === "string") assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    },
  );
}

const FULL = `
require: ./dist/jobs.js
concurrency: 10
timeout: 25
queues: [critical, [default, 2], low]
capsules:
  serial: { concurrency: 1, queues: [serial] }
tag: web
labels: [a, b]
redis_url: redis://:secret@redis.example:6380/1
fetch: reliable
max_retries: 5
dead_max_jobs: 100
dead_timeout_in_seconds: 3600
average_scheduled_poll_interval: 5
poll_interval_average: 10
heartbeat_interval: 10
sidekiq_version: 8
max_payload_bytes: 1024
metrics: { port: 9394, host: 127.0.0.1 }
cluster:
  processes: 2
  groups: ["critical,default", "cronjob", "*"]
  max_memory_mb: 512
  hang_threshold: 60
  metrics: { port: 9395, host: 0.0.0.0 }
production:
  concurrency: 25
`;

describe("loadConfig: reading", () => {
  test("every known key, in camelCase", () => {
    assert.deepEqual(load(FULL), {
      require: "./dist/jobs.js",
      concurrency: 10,
      timeout: 25,
      queues: [
        { name: "critical", weight: 0 },
        { name: "default", weight: 2 },
        { name: "low", weight: 0 },
      ],
      capsules: [{ name: "serial", concurrency: 1, queues: [{ name: "serial", weight: 0 }] }],
      tag: "web",
      labels: ["a", "b"],
      redisUrl: "redis://:secret@redis.example:6380/1",
      fetch: "reliable",
      maxRetries: 5,
      deadMaxJobs: 100,
      deadTimeoutInSeconds: 3600,
      averageScheduledPollInterval: 5,
      pollIntervalAverage: 10,
      heartbeatInterval: 10,
      sidekiqVersion: 8,
      maxPayloadBytes: 1024,
      metrics: { port: 9394, host: "127.0.0.1" },
      cluster: {
        processes: 2,
        groups: ["critical,default", "cronjob", "*"],
        maxMemoryMb: 512,
        hangThreshold: 60,
        metrics: { port: 9395, host: "0.0.0.0" },
      },
    });
  });

  test("sidekiq_version: auto, 6, 7 or 8", () => {
    for (const value of ["auto", 6, 7, 8])
      assert.deepEqual(load(`sidekiq_version: ${value}\n`), { sidekiqVersion: value });
  });

  test("an empty file or one with only comments sets nothing", () => {
    assert.deepEqual(load(""), {});
    assert.deepEqual(load("# nothing yet\n"), {});
  });

  test("Sidekiq-style keys with a leading colon", () => {
    assert.deepEqual(load(":concurrency: 3\n:queues:\n  - critical\n:capsules:\n  one: { :queues: [x] }\n"), {
      concurrency: 3,
      queues: [{ name: "critical", weight: 0 }],
      capsules: [{ name: "one", concurrency: undefined, queues: [{ name: "x", weight: 0 }] }],
    });
  });

  test("queues as names, [name, weight] pairs and 'name,weight' strings", () => {
    assert.deepEqual(load('queues: [a, [b, 2], "c,3", [d], ["e", "4"]]').queues, [
      { name: "a", weight: 0 },
      { name: "b", weight: 2 },
      { name: "c", weight: 3 },
      { name: "d", weight: 0 },
      { name: "e", weight: 4 },
    ]);
  });

  test("a capsule without concurrency leaves it to the top level", () => {
    assert.deepEqual(load("capsules:\n  bulk: { queues: [bulk, [mail, 2]] }").capsules, [
      {
        name: "bulk",
        concurrency: undefined,
        queues: [
          { name: "bulk", weight: 0 },
          { name: "mail", weight: 2 },
        ],
      },
    ]);
  });

  test("poll_interval_average may be null (scale with the process count)", () => {
    assert.deepEqual(load("poll_interval_average: ~"), { pollIntervalAverage: null });
  });
});

describe("loadConfig: environment sections", () => {
  const text =
    "concurrency: 10\ntimeout: 8\nqueues: [a]\nproduction:\n  concurrency: 25\n  queues: [b, c]\nstaging:\n  concurrency: 5\n";

  test("the section of the environment is merged over the top level", () => {
    assert.deepEqual(load(text, "production"), {
      concurrency: 25,
      timeout: 8,
      queues: [
        { name: "b", weight: 0 },
        { name: "c", weight: 0 },
      ],
    });
  });

  test("sections of other environments are ignored", () => {
    assert.deepEqual(load(text, "development"), { concurrency: 10, timeout: 8, queues: [{ name: "a", weight: 0 }] });
  });

  test("a section may use a leading colon and YAML merge keys", () => {
    const shared = "base: &base\n  timeout: 9\n:production:\n  <<: *base\n  :concurrency: 30\n";
    assert.deepEqual(load(shared, "production"), { timeout: 9, concurrency: 30 });
  });

  test("a bad key or value inside the chosen section names its path", () => {
    rejects("production:\n  concurency: 3\n", /^config\/tsq\.yml: unknown key "production\.concurency"/, "production");
    rejects(
      "production:\n  timeout: -1\n",
      "config/tsq.yml: production.timeout must be a number of seconds above 0 and at most 86400, got -1",
      "production",
    );
  });
});

describe("loadConfig: rejections", () => {
  test("an unknown key is named, with what to do", () => {
    rejects(
      "concurency: 10",
      /^config\/tsq\.yml: unknown key "concurency"; fix its spelling or remove it \(known keys: require, concurrency, /,
    );
    rejects(
      "capsules:\n  serial: { concurrency: 1, queues: [s], weight: 2 }",
      /unknown key "capsules\.serial\.weight"/,
    );
    rejects("cluster:\n  procesess: 2", /unknown key "cluster\.procesess"/);
    rejects("metrics: { port: 1, hots: x }", /unknown key "metrics\.hots"/);
  });

  test("a bad value names the key path and the value", () => {
    rejects(
      'capsules:\n  serial: { concurrency: "x", queues: [serial] }',
      'config/tsq.yml: capsules.serial.concurrency must be an integer from 1 to 10000 (job slots), got "x"',
    );
    rejects("concurrency: 0", "config/tsq.yml: concurrency must be an integer from 1 to 10000 (job slots), got 0");
    rejects("concurrency: 2.5", "config/tsq.yml: concurrency must be an integer from 1 to 10000 (job slots), got 2.5");
    rejects(
      'concurrency: "10"',
      'config/tsq.yml: concurrency must be an integer from 1 to 10000 (job slots), got "10"',
    );
    rejects("timeout: 0", "config/tsq.yml: timeout must be a number of seconds above 0 and at most 86400, got 0");
    rejects("timeout:", "config/tsq.yml: timeout must be a number of seconds above 0 and at most 86400, got null");
    rejects("fetch: super", 'config/tsq.yml: fetch must be "basic" or "reliable", got "super"');
    rejects("sidekiq_version: 9", "config/tsq.yml: sidekiq_version must be auto, 6, 7 or 8, got 9");
    rejects('sidekiq_version: "8"', 'config/tsq.yml: sidekiq_version must be auto, 6, 7 or 8, got "8"');
    rejects("max_retries: -1", "config/tsq.yml: max_retries must be an integer from 0 to 1000 (retries), got -1");
    rejects("labels: a", 'config/tsq.yml: labels must be a list of non-empty strings, got "a"');
    rejects("tag: ''", 'config/tsq.yml: tag must be a non-empty string, got ""');
    rejects(
      "metrics: { port: 70000 }",
      "config/tsq.yml: metrics.port must be a TCP port from 0 to 65535 (0 = off), got 70000",
    );
    rejects(
      "cluster: { processes: 0 }",
      "config/tsq.yml: cluster.processes must be an integer from 1 to 1024 (children per group), got 0",
    );
    rejects("cluster: { groups: [] }", /^config\/tsq\.yml: cluster\.groups must be a non-empty list of queue groups/);
    rejects("capsules: [a, b]", 'config/tsq.yml: capsules must be a mapping of key: value pairs, got ["a","b"]');
  });

  test("queue weights must be positive integers", () => {
    rejects(
      "queues: [[a, 0]]",
      /^config\/tsq\.yml: queues\[0\] must be a queue name, optionally followed by ",<weight>".* got \["a",0\]$/,
    );
    rejects('queues: [a, "b,x"]', /^config\/tsq\.yml: queues\[1\] must be .* got "b,x"$/);
    rejects("queues: [[a, 1.5]]", /queues\[0\] must be .* got \["a",1\.5\]$/);
    rejects("queues: [[a, 2, 3]]", /queues\[0\] must be/);
    rejects("queues: []", /^config\/tsq\.yml: queues must be a non-empty list of queues/);
    rejects("queues: [a, [a, 2]]", 'config/tsq.yml: queues lists queue "a" twice; list it once, with a weight');
  });

  test("capsules need queues and may not be called default", () => {
    rejects(
      "capsules:\n  serial: { concurrency: 1 }",
      "config/tsq.yml: capsules.serial.queues is missing; list the queues this capsule works, e.g. queues: [serial]",
    );
    rejects(
      "capsules:\n  default: { queues: [a] }",
      /^config\/tsq\.yml: capsules\.default is the capsule built from the top-level queues/,
    );
  });

  test("a Redis URL is checked and never shown with its password", () => {
    rejects(
      "redis_url: http://user:secret@host",
      /^config\/tsq\.yml: redis_url must be a redis:\/\/ or rediss:\/\/ URL .*got http:\/\/user:\*\*\*@host\/$/,
    );
    rejects("fetch: redis://user:secret@host", /got "redis:\/\/user:\*\*\*@host"$/);
  });

  test("a key given twice, with and without a colon", () => {
    rejects(
      "concurrency: 1\n:concurrency: 2\n",
      "config/tsq.yml: concurrency is given twice (with and without a colon); keep one",
    );
  });

  test("a YAML syntax error names the file and the line", () => {
    rejects(
      "concurrency: 10\nqueues: [a, b\ntimeout: 3\n",
      /^config\/tsq\.yml: invalid YAML at line 3, column 1: .+; fix the syntax there$/,
    );
    rejects("a: 1\na: 2\n", /^config\/tsq\.yml: invalid YAML at line 2, column 1: Map keys must be unique/);
  });

  test("the document must be a mapping", () => {
    rejects("- a\n- b\n", 'config/tsq.yml: the top level must be a mapping of key: value pairs, got ["a","b"]');
  });

  test("an unreadable file is a ConfigError naming it", () => {
    assert.throws(() => loadConfig(join(dir, "missing.yml"), "development", "config/missing.yml"), {
      name: "ConfigError",
      message: /^config\/missing\.yml: cannot read the config file \(ENOENT/,
    });
  });

  test("the label defaults to the path", () => {
    const path = writeConfig("timeout: x");
    assert.throws(() => loadConfig(path, "development"), {
      message: `${path}: timeout must be a number of seconds above 0 and at most 86400, got "x"`,
    });
  });
});

describe("parseQueueText", () => {
  test("name and optional positive integer weight", () => {
    assert.deepEqual(parseQueueText("critical"), { name: "critical", weight: 0 });
    assert.deepEqual(parseQueueText("critical,3"), { name: "critical", weight: 3 });
    assert.deepEqual(parseQueueText(" cron:job , 2 "), { name: "cron:job", weight: 2 });
    for (const bad of ["", ",2", "a,", "a,0", "a,-1", "a,1.5", "a,2,3", "a b"]) {
      assert.equal(parseQueueText(bad), undefined, bad);
    }
  });
});
