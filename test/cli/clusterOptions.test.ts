import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { buildClusterCommand, CLUSTER_DEFAULTS, resolveClusterOptions } from "../../src/options/clusterOptions.js";
import { resolveWorkerOptions, UsageError } from "../../src/options/workerOptions.js";
import { ConfigError } from "../../src/wire/errors.js";
import { workdirs } from "../helpers/fixtures.js";

const workdir = workdirs("tsq-clusterOptions");

function resolve(argv: string[], config?: string, env: NodeJS.ProcessEnv = {}) {
  return resolveClusterOptions(argv, env, workdir(config));
}

function usageError(argv: string[], message: RegExp): void {
  assert.throws(
    () => resolve(argv),
    (error: unknown) => {
      assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
      assert.match(error.message, message);
      assert.match(error.usage, /^Usage: tsq-cluster \[options\] \[groups\.\.\.\]/);
      return true;
    },
  );
}

const clusterFile = [
  "concurrency: 4",
  "cluster:",
  "  processes: 3",
  '  groups: ["critical,default", "cronjob", "*"]',
  "  max_memory_mb: 512",
  "  hang_threshold: 30",
  "  metrics: { port: 9500, host: 0.0.0.0 }",
  "",
].join("\n");

describe("defaults", () => {
  test("with nothing given: CPUs, no groups, port 9394 on loopback", () => {
    const options = resolve([]);
    assert.deepEqual(
      { ...options, worker: undefined },
      {
        worker: undefined,
        groups: undefined,
        negate: false,
        strictOrder: false,
        concurrency: { fixed: undefined, max: 20, min: 0 },
        processes: availableParallelism(),
        dryrun: false,
        listQueues: false,
        maxMemoryMb: undefined,
        hangThreshold: 60,
        maxAbandoned: 10,
        metricsPort: 9394,
        metricsHost: "127.0.0.1",
        webPort: 0,
      },
    );
    assert.deepEqual(CLUSTER_DEFAULTS, {
      hangThreshold: 60,
      maxAbandoned: 10,
      metricsPort: 9394,
      metricsHost: "127.0.0.1",
    });
  });
});

describe("precedence: flag > config file > default", () => {
  test("processes", () => {
    assert.equal(resolve([]).processes, availableParallelism());
    assert.equal(resolve([], clusterFile).processes, 3);
    assert.equal(resolve(["--processes", "5"], clusterFile).processes, 5);
  });

  test("groups: positional arguments, then cluster.groups", () => {
    assert.equal(resolve([]).groups, undefined);
    assert.deepEqual(resolve([], clusterFile).groups, ["critical,default", "cronjob", "*"]);
    assert.deepEqual(resolve(["a,b", "c"], clusterFile).groups, ["a,b", "c"]);
  });

  test("-q beats cluster.groups: one group of those queues", () => {
    const options = resolve(["-q", "low,2", "-q", "high,3"], clusterFile);
    assert.equal(options.groups, undefined);
    assert.deepEqual(options.worker.capsules[0]?.queues, [
      { name: "low", weight: 2 },
      { name: "high", weight: 3 },
    ]);
  });

  test("metrics port and host", () => {
    assert.deepEqual([resolve([]).metricsPort, resolve([]).metricsHost], [9394, "127.0.0.1"]);
    const file = resolve([], clusterFile);
    assert.deepEqual([file.metricsPort, file.metricsHost], [9500, "0.0.0.0"]);
    const flag = resolve(["--metrics-port", "0", "--metrics-host", "::1"], clusterFile);
    assert.deepEqual([flag.metricsPort, flag.metricsHost], [0, "::1"]);
  });

  test("max memory and hang threshold", () => {
    const file = resolve([], clusterFile);
    assert.deepEqual([file.maxMemoryMb, file.hangThreshold], [512, 30]);
    const flag = resolve(["--max-memory", "256.5", "--hang-threshold", "90"], clusterFile);
    assert.deepEqual([flag.maxMemoryMb, flag.hangThreshold], [256.5, 90]);
  });

  test("max abandoned: flag, then cluster.max_abandoned, then 10; 0 means never; bad values named", () => {
    assert.equal(resolve([]).maxAbandoned, 10);
    assert.equal(resolve([], "cluster:\n  max_abandoned: 0\n").maxAbandoned, 0);
    assert.equal(resolve(["--max-abandoned", "3"], "cluster:\n  max_abandoned: 0\n").maxAbandoned, 3);
    assert.throws(() => resolve(["--max-abandoned", "2.5"]), /max-abandoned|maxAbandoned|integer/);
    assert.throws(() => resolve([], "cluster:\n  max_abandoned: -1\n"), /max_abandoned/);
  });

  test("-m and --min-concurrency: flag, then cluster.max_concurrency / min_concurrency, then GitLab 16.x's 20 and 0", () => {
    const file = "cluster:\n  max_concurrency: 0\n  min_concurrency: 4\n";
    assert.deepEqual(resolve(["a"], file).concurrency, { fixed: undefined, max: 0, min: 4 });
    assert.deepEqual(resolve(["a", "-m", "7", "--min-concurrency", "0"], file).concurrency, {
      fixed: undefined,
      max: 7,
      min: 0,
    });
  });

  test("a concurrency from -c, the config file or TSQ_CONCURRENCY is fixed for every child", () => {
    assert.equal(resolve(["a", "-c", "3"]).concurrency.fixed, 3);
    assert.equal(resolve(["a"], clusterFile).concurrency.fixed, 4);
    assert.equal(resolve(["a"], undefined, { TSQ_CONCURRENCY: "6" }).concurrency.fixed, 6);
  });

  test("-n, --strict-order, -d", () => {
    assert.deepEqual(
      [resolve(["-n", "a"]).negate, resolve(["--strict-order", "a"]).strictOrder, resolve(["-d"]).dryrun],
      [true, true, true],
    );
  });

  test("--dryrun and --list-queues", () => {
    assert.equal(resolve(["--dryrun"]).dryrun, true);
    assert.equal(resolve(["--list-queues"]).listQueues, true);
  });
});

describe("worker options are resolved as tsq resolves them", () => {
  test("the shared flags, file and environment give the same WorkerOptions, metrics port aside", () => {
    const cwd = workdir("concurrency: 4\ntimeout: 9\nmetrics: { port: 9400 }\n");
    const argv = ["-c", "7", "-r", "jobs.js", "-g", "api", "-e", "production", "-v", "--fetch", "reliable"];
    const env = { REDIS_URL: "redis://env:6379/1" };
    const cluster = resolveClusterOptions([...argv, "a,b"], env, cwd).worker;
    const single = resolveWorkerOptions(argv, env, cwd).options;
    assert.deepEqual(cluster, { ...single, metricsPort: undefined });
    assert.equal(single.metricsPort, 9400, "tsq alone serves the file's metrics port");
    assert.deepEqual(
      [cluster.capsules[0]?.concurrency, cluster.timeout, cluster.redisUrl],
      [7, 9, "redis://env:6379/1"],
    );
  });

  test("--metrics-port is the supervisor's, never a child's", () => {
    const options = resolve(["--metrics-port", "9600"]);
    assert.deepEqual([options.metricsPort, options.worker.metricsPort], [9600, undefined]);
  });
});

describe("bad flags are UsageErrors, bad settings ConfigErrors", () => {
  test("bad --processes", () => {
    usageError(
      ["--processes", "0"],
      /^option '--processes <n>' argument '0' is invalid\. Expected an integer from 1 to 1024 \(children per group\)\.$/,
    );
    usageError(["--processes", "two"], /argument 'two' is invalid/);
  });
  test("bad --max-memory", () =>
    usageError(
      ["--max-memory", "-1"],
      /^option '--max-memory <MB>' argument '-1' is invalid\. Expected a number of MB above 0 and at most 1048576\.$/,
    ));
  test("bad --hang-threshold", () =>
    usageError(["--hang-threshold", "0"], /^option '--hang-threshold <seconds>' argument '0' is invalid/));
  test("bad --metrics-port", () =>
    usageError(["--metrics-port", "70000"], /argument '70000' is invalid\. Expected a TCP port/));
  test("bad -m and --min-concurrency", () => {
    usageError(
      ["-m", "-1"],
      /argument '-1' is invalid\. Expected an integer from 0 to 10000 \(job slots, 0 = no maximum\)\.$/,
    );
    usageError(
      ["--min-concurrency", "x"],
      /argument 'x' is invalid\. Expected an integer from 0 to 10000 \(job slots\)\.$/,
    );
  });
  test("-n without groups", () => usageError(["-n"], /^-n\/--negate needs queue groups/));
  test("--dryrun with --list-queues", () =>
    usageError(["--dryrun", "--list-queues"], /^option '-d, --dryrun' cannot be used with option '--list-queues'$/));
  test("groups with -q", () =>
    usageError(
      ["a,b", "-q", "c"],
      /^give queue groups or -q, not both: with groups, each group lists its own queues$/,
    ));
  test("a shared flag keeps its checks", () => usageError(["-q", "a", "-q", "a"], /^queue "a" is given twice with -q/));

  test("a malformed group is a ConfigError before Redis is asked", () => {
    assert.throws(() => resolve(["a", "b,,c"]), {
      name: "ConfigError",
      message: 'queue group 1 ("b,,c") has an empty queue name; remove the extra comma',
    });
  });

  test("a malformed group in the file names the file", () => {
    assert.throws(
      () => resolve([], 'cluster:\n  groups: ["a", "b c"]\n'),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          'config/tsq.yml: cluster.groups: queue group 1 ("b c") has a queue name with whitespace, "b c"; separate queues with commas',
        );
        return true;
      },
    );
  });

  test("bad cluster values in the file name the key", () => {
    assert.throws(() => resolve([], "cluster:\n  processes: 0\n"), {
      name: "ConfigError",
      message: "config/tsq.yml: cluster.processes must be an integer from 1 to 1024 (children per group), got 0",
    });
  });
});

describe("help", () => {
  test("every cluster flag is listed with its default", () => {
    const help = buildClusterCommand().helpInformation();
    for (const flag of [
      "[groups...]",
      "-r, --require",
      "-q, --queue",
      "-c, --concurrency",
      "-t, --timeout",
      "-C, --config",
      "-g, --tag",
      "-e, --environment",
      "-v, --verbose",
      "-V, --version",
      "--redis-url",
      "--fetch",
      "--processes <n>",
      "-n, --negate",
      "--strict-order",
      "-m, --max-concurrency <n>",
      "--min-concurrency <n>",
      "-d, --dryrun",
      "--list-queues",
      "--max-memory <MB>",
      "--hang-threshold <seconds>",
      "--metrics-port <port>",
      "--metrics-host <host>",
    ]) {
      assert.ok(help.includes(flag), flag);
    }
  });
});

describe("the CLI exit status", () => {
  const moduleUrl = new URL("../../src/options/clusterOptions.js", import.meta.url).href;
  const workerUrl = new URL("../../src/options/workerOptions.js", import.meta.url).href;
  // What bin/tsq-cluster does. Arguments travel in an environment variable so `node -e` does not read them.
  const script = `
    const { resolveClusterOptions } = await import(process.env.TSQ_TEST_MODULE);
    const { exitOnOptionError } = await import(process.env.TSQ_TEST_WORKER);
    try { resolveClusterOptions(JSON.parse(process.env.TSQ_TEST_ARGV), process.env, process.cwd()); }
    catch (error) { exitOnOptionError(error, process.stderr, "tsq-cluster"); }
    process.stdout.write("resolved");`;

  function run(argv: string[], config?: string) {
    return spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: workdir(config),
      encoding: "utf8",
      env: {
        PATH: process.env["PATH"],
        TSQ_TEST_MODULE: moduleUrl,
        TSQ_TEST_WORKER: workerUrl,
        TSQ_TEST_ARGV: JSON.stringify(argv),
      },
    });
  }

  test("a bad flag exits 2 with tsq-cluster: and the usage", () => {
    const result = run(["--processes", "x"]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /^tsq-cluster: option '--processes <n>' argument 'x' is invalid\. Expected an integer from 1 to 1024 \(children per group\)\.\n\nUsage: tsq-cluster \[options\] \[groups\.\.\.\]\n/,
    );
    assert.equal(result.stdout, "");
  });

  test("a bad group exits 2 with the message only", () => {
    const result = run(["a,,b"]);
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      'tsq-cluster: queue group 0 ("a,,b") has an empty queue name; remove the extra comma\n',
    );
  });

  test("a bad config value exits 2", () => {
    const result = run([], "cluster:\n  metrics: { port: 99999 }\n");
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      "tsq-cluster: config/tsq.yml: cluster.metrics.port must be a TCP port from 0 to 65535 (0 = off), got 99999\n",
    );
  });

  test("good options resolve", () => {
    const result = run(["critical,default", "cronjob", "*", "--processes", "2", "--dryrun"]);
    assert.deepEqual([result.status, result.stdout, result.stderr], [0, "resolved", ""]);
  });
});
