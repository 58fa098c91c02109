import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { PassThrough } from "node:stream";
import { CommanderError } from "commander";
import { buildWorkerCommand, exitOnOptionError, UsageError } from "../../src/options/workerFlags.js";
import { resolveWorkerOptions } from "../../src/options/workerOptions.js";
import { DEFAULTS } from "../../src/platform/config/defaults.js";
import { ConfigError } from "../../src/wire/errors.js";
import { workdirs } from "../helpers/fixtures.js";

const workdir = workdirs("tsq-workerOptions");

function resolve(argv: string[], env: NodeJS.ProcessEnv = {}, cwd = workdir()) {
  return resolveWorkerOptions(argv, env, cwd);
}

function usageError(argv: string[], message: RegExp): void {
  assert.throws(
    () => resolve(argv),
    (error: unknown) => {
      assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
      assert.match(error.message, message);
      assert.match(error.usage, /^Usage: tsq \[options\]/);
      return true;
    },
  );
}

const packageVersion = (
  JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

describe("defaults", () => {
  test("with no flags, file or environment, DEFAULTS apply", () => {
    const cwd = workdir();
    const { options, cluster } = resolve([], {}, cwd);
    const { concurrency, ...defaults } = DEFAULTS;
    assert.deepEqual(options, {
      ...defaults,
      require: undefined,
      capsules: [{ name: "default", concurrency, queues: [{ name: "default", weight: 0 }] }],
      tag: basename(cwd),
      labels: [],
      environment: "development",
      verbose: false,
      fetch: "basic",
      metricsPort: undefined,
      metricsHost: "127.0.0.1",
      configFile: undefined,
      shard: "default",
      defaultRedisUrl: DEFAULTS.redisUrl,
      shards: [],
    });
    assert.equal(cluster, undefined);
  });
});

describe("precedence: flag > config file > environment > default", () => {
  const env = { TSQ_CONCURRENCY: "3", TSQ_TIMEOUT: "4", REDIS_URL: "redis://env:6379/1" };
  const file = "concurrency: 5\ntimeout: 6\nredis_url: redis://file:6379/2\n";
  const flags = ["-c", "7", "-t", "8", "--redis-url", "redis://flag:6379/3"];
  const cases = [
    {
      given: "default",
      argv: [],
      env: {},
      config: undefined,
      expected: [DEFAULTS.concurrency, DEFAULTS.timeout, DEFAULTS.redisUrl],
    },
    { given: "environment", argv: [], env, config: undefined, expected: [3, 4, "redis://env:6379/1"] },
    { given: "config file", argv: [], env, config: file, expected: [5, 6, "redis://file:6379/2"] },
    { given: "flag", argv: flags, env, config: file, expected: [7, 8, "redis://flag:6379/3"] },
  ];
  for (const { given, argv, env: vars, config, expected } of cases) {
    test(`${given} wins for concurrency, timeout and redis url`, () => {
      const { options } = resolve(argv, vars, workdir(config));
      assert.deepEqual([options.capsules[0]?.concurrency, options.timeout, options.redisUrl], expected);
    });
  }

  test("long flags and fractional timeouts", () => {
    const { options } = resolve(["--concurrency", "2", "--timeout", "0.5"], { TSQ_TIMEOUT: "9" });
    assert.equal(options.capsules[0]?.concurrency, 2);
    assert.equal(options.timeout, 0.5);
  });

  test("empty environment variables count as unset", () => {
    const { options } = resolve([], { REDIS_URL: "", TSQ_CONCURRENCY: "" });
    assert.equal(options.redisUrl, DEFAULTS.redisUrl);
    assert.equal(options.capsules[0]?.concurrency, DEFAULTS.concurrency);
  });
});

describe("config file and environment sections", () => {
  const config = "concurrency: 10\nproduction:\n  concurrency: 25\nstaging:\n  concurrency: 4\n";

  test("config/tsq.yml under cwd is read when present", () => {
    const cwd = workdir(config);
    const { options } = resolve([], {}, cwd);
    assert.equal(options.configFile, join(cwd, "config/tsq.yml"));
    assert.equal(options.capsules[0]?.concurrency, 10);
  });

  test("-e picks the section merged over the top level", () => {
    assert.equal(resolve(["-e", "production"], {}, workdir(config)).options.capsules[0]?.concurrency, 25);
    assert.equal(resolve(["--environment", "staging"], {}, workdir(config)).options.environment, "staging");
  });

  test("the environment name comes from -e, then TSQ_ENV, APP_ENV, NODE_ENV", () => {
    const all = { TSQ_ENV: "staging", APP_ENV: "production", NODE_ENV: "test" };
    assert.equal(resolve(["-e", "production"], all, workdir(config)).options.capsules[0]?.concurrency, 25);
    assert.equal(resolve([], all, workdir(config)).options.capsules[0]?.concurrency, 4);
    assert.equal(
      resolve([], { APP_ENV: "production", NODE_ENV: "staging" }, workdir(config)).options.environment,
      "production",
    );
    assert.equal(resolve([], { NODE_ENV: "staging" }, workdir(config)).options.capsules[0]?.concurrency, 4);
  });

  test("-C is relative to cwd and replaces config/tsq.yml", () => {
    const cwd = workdir("concurrency: 10\n");
    writeFileSync(join(cwd, "other.yml"), "concurrency: 2\n");
    const { options } = resolve(["-C", "other.yml"], {}, cwd);
    assert.equal(options.capsules[0]?.concurrency, 2);
    assert.equal(options.configFile, join(cwd, "other.yml"));
  });

  test("a missing -C file is a ConfigError", () => {
    assert.throws(() => resolve(["-C", "nope.yml"]), {
      name: "ConfigError",
      message: /^nope\.yml: config file not found \(given with -C, looked in .+\); check the path$/,
    });
  });

  test("errors in the default file name config/tsq.yml", () => {
    assert.throws(() => resolve([], {}, workdir("timeout: -2\n")), {
      message: "config/tsq.yml: timeout must be a number of seconds above 0 and at most 86400, got -2",
    });
  });

  test("the cluster section is returned as is, apart from the options", () => {
    const { cluster } = resolve(
      [],
      {},
      workdir("cluster:\n  processes: 2\n  groups: ['a,b', '*']\n  hang_threshold: 60\n"),
    );
    assert.deepEqual(cluster, { processes: 2, groups: ["a,b", "*"], hangThreshold: 60 });
  });

  test("file-only settings and metrics", () => {
    const cwd = workdir(
      "max_retries: 3\nsidekiq_version: 6\nlabels: [x]\nfetch: reliable\nmetrics: { port: 9400, host: 0.0.0.0 }\n",
    );
    const { options } = resolve([], {}, cwd);
    assert.deepEqual(
      [
        options.maxRetries,
        options.sidekiqVersion,
        options.labels,
        options.fetch,
        options.metricsPort,
        options.metricsHost,
      ],
      [3, 6, ["x"], "reliable", 9400, "0.0.0.0"],
    );
    const flagged = resolve(
      ["--fetch", "basic", "--metrics-port", "0", "--metrics-host", "::1", "-v"],
      {},
      cwd,
    ).options;
    assert.deepEqual(
      [flagged.fetch, flagged.metricsPort, flagged.metricsHost, flagged.verbose],
      ["basic", 0, "::1", true],
    );
  });
});

describe("queues, capsules, require and tag", () => {
  test("-q name[,weight] repeated", () => {
    assert.deepEqual(resolve(["-q", "a,3", "-q", "b"]).options.capsules, [
      {
        name: "default",
        concurrency: DEFAULTS.concurrency,
        queues: [
          { name: "a", weight: 3 },
          { name: "b", weight: 0 },
        ],
      },
    ]);
  });

  test("YAML queues, overridden by -q", () => {
    const cwd = workdir('queues: [a, [b, 2], "c,4"]\n');
    assert.deepEqual(resolve([], {}, cwd).options.capsules[0]?.queues, [
      { name: "a", weight: 0 },
      { name: "b", weight: 2 },
      { name: "c", weight: 4 },
    ]);
    assert.deepEqual(resolve(["--queue", "z"], {}, cwd).options.capsules[0]?.queues, [{ name: "z", weight: 0 }]);
  });

  test("config capsules follow the default one and inherit its concurrency", () => {
    const cwd = workdir(
      "concurrency: 6\ncapsules:\n  serial: { concurrency: 1, queues: [serial] }\n  bulk: { queues: [bulk] }\n",
    );
    assert.deepEqual(resolve(["-c", "8"], {}, cwd).options.capsules, [
      { name: "default", concurrency: 8, queues: [{ name: "default", weight: 0 }] },
      { name: "serial", concurrency: 1, queues: [{ name: "serial", weight: 0 }] },
      { name: "bulk", concurrency: 8, queues: [{ name: "bulk", weight: 0 }] },
    ]);
  });

  test("require is resolved against cwd, from the flag or the file", () => {
    const cwd = workdir("require: ./dist/jobs.js\n");
    assert.equal(resolve([], {}, cwd).options.require, join(cwd, "dist/jobs.js"));
    assert.equal(resolve(["-r", "lib/other.js"], {}, cwd).options.require, join(cwd, "lib/other.js"));
    assert.equal(resolve(["--require", "/abs/jobs.js"], {}, cwd).options.require, "/abs/jobs.js");
  });

  test("tag from -g, then the file, then the directory name", () => {
    const cwd = workdir("tag: web\n");
    assert.equal(resolve(["-g", "api"], {}, cwd).options.tag, "api");
    assert.equal(resolve([], {}, cwd).options.tag, "web");
    const plain = workdir();
    assert.equal(resolve([], {}, plain).options.tag, basename(plain));
  });
});

describe("bad flags are UsageErrors", () => {
  test("unknown option", () => usageError(["--bogus"], /^unknown option '--bogus'$/));
  test("non-integer concurrency", () => {
    usageError(
      ["--concurrency", "abc"],
      /^option '-c, --concurrency <n>' argument 'abc' is invalid\. Expected an integer from 1 to 10000 \(job slots\)\.$/,
    );
    usageError(["-c", "0"], /argument '0' is invalid/);
    usageError(["-c", "1.5"], /argument '1\.5' is invalid/);
  });
  test("missing value", () => usageError(["-c"], /^option '-c, --concurrency <n>' argument missing$/));
  test("bad timeout", () => usageError(["-t", "0"], /^option '-t, --timeout <seconds>' argument '0' is invalid/));
  test("bad queue weight", () =>
    usageError(
      ["-q", "a,0"],
      /^option '-q, --queue <name\[,weight\]>' argument 'a,0' is invalid\. Expected a queue name/,
    ));
  test("a queue given twice", () =>
    usageError(["-q", "a", "-q", "a,2"], /^queue "a" is given twice with -q; give it once, with a weight$/));
  test("unknown fetch mode", () => usageError(["--fetch", "super"], /Allowed choices are basic, reliable/));
  test("bad metrics port", () =>
    usageError(["--metrics-port", "65536"], /argument '65536' is invalid\. Expected a TCP port/));
  test("stray arguments", () => usageError(["default"], /^too many arguments/));
  test("a bad Redis URL is shown without its password", () => {
    usageError(
      ["--redis-url", "http://u:secret@host"],
      /^--redis-url must be a redis:\/\/ or rediss:\/\/ URL .*, got http:\/\/u:\*\*\*@host\/$/,
    );
    usageError(["--redis_url=redis://u:secret@host"], /^unknown option '--redis_url=redis:\/\/u:\*\*\*@host'/);
  });
});

describe("bad environment values are ConfigErrors naming the variable", () => {
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [
      { TSQ_CONCURRENCY: "abc" },
      /^TSQ_CONCURRENCY must be an integer from 1 to 10000 \(job slots\), got "abc"; fix or unset it$/,
    ],
    [
      { TSQ_TIMEOUT: "-1" },
      /^TSQ_TIMEOUT must be a number of seconds above 0 and at most 86400, got "-1"; fix or unset it$/,
    ],
    [
      { REDIS_URL: "http://u:secret@host" },
      /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL .*, got http:\/\/u:\*\*\*@host\/; fix or unset it$/,
    ],
  ];
  for (const [env, message] of cases) {
    test(Object.keys(env).join(), () => {
      assert.throws(
        () => resolve([], env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }

  test("a valid flag does not hide a bad variable", () => {
    assert.throws(() => resolve(["-c", "3"], { TSQ_CONCURRENCY: "x" }), { name: "ConfigError" });
  });
});

describe("version and help", () => {
  test("-V prints the package version", () => {
    let out = "";
    // exitOverride() without a callback makes commander throw instead of exiting this test process.
    const command = buildWorkerCommand()
      .exitOverride()
      .configureOutput({ writeOut: (text) => (out += text) });
    assert.throws(
      () => command.parse(["-V"], { from: "user" }),
      (error: unknown) => error instanceof CommanderError && error.code === "commander.version",
    );
    assert.equal(out, `${packageVersion}\n`);
  });

  test("help gives every flag with its default", () => {
    const help = buildWorkerCommand().helpInformation();
    for (const flag of [
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
      "--metrics-port",
      "--metrics-host",
      "--execution-metrics",
      "--no-execution-metrics",
    ]) {
      assert.ok(help.includes(flag), flag);
    }
    assert.equal(help.match(/\(default:\s/g)?.length, 13); // every flag but -V, -h and --no-execution-metrics
  });
});

describe("the CLI exit status", () => {
  const moduleUrl = new URL("../../src/options/workerOptions.js", import.meta.url).href;
  // What bin/tsq will do: resolve, and turn option errors into status 2. Arguments travel in an
  // environment variable so `node -e` does not read them as its own flags.
  const script = `
    const { resolveWorkerOptions, exitOnOptionError } = await import(process.env.TSQ_TEST_MODULE);
    try { resolveWorkerOptions(JSON.parse(process.env.TSQ_TEST_ARGV), process.env, process.cwd()); }
    catch (error) { exitOnOptionError(error, process.stderr); }
    process.stdout.write("resolved");`;

  function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
    return spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: workdir(),
      encoding: "utf8",
      env: { PATH: process.env["PATH"], TSQ_TEST_MODULE: moduleUrl, TSQ_TEST_ARGV: JSON.stringify(argv), ...env },
    });
  }

  test("a bad flag exits 2 with the message and usage on stderr", () => {
    const result = run(["--concurrency", "abc"]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /^tsq: option '-c, --concurrency <n>' argument 'abc' is invalid\. Expected an integer from 1 to 10000 \(job slots\)\.\n\nUsage: tsq \[options\]\n/,
    );
    assert.equal(result.stdout, "");
  });

  test("a bad setting exits 2 with the message only", () => {
    const result = run([], { TSQ_CONCURRENCY: "abc" });
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      'tsq: TSQ_CONCURRENCY must be an integer from 1 to 10000 (job slots), got "abc"; fix or unset it\n',
    );
  });

  test("-V and --help exit 0", () => {
    const version = run(["-V"]);
    assert.deepEqual([version.status, version.stdout, version.stderr], [0, `${packageVersion}\n`, ""]);
    const help = run(["--help"]);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: tsq \[options\]/);
  });

  test("good options resolve", () => {
    const result = run(["-q", "a,2"]);
    assert.deepEqual([result.status, result.stdout], [0, "resolved"]);
  });

  test("other errors are rethrown, not turned into status 2", () => {
    const error = new Error("boom");
    assert.throws(
      () => exitOnOptionError(error, new PassThrough()),
      (thrown: unknown) => thrown === error,
    );
  });
});
