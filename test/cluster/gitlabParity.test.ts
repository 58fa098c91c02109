/**
 * `tsq-cluster` against GitLab's sidekiq-cluster, flag for flag (issue 25): the real binary's --dryrun
 * and --list-queues against a private redis-server, and one real cluster for the fetch order.
 *
 *   -n/--negate       each group negated in turn: a name, a namespace, a comma group, a query
 *   -m, --min-concurrency, -c   GitLab 16.x's sizing: queues + 1, clamped; -c fixed
 *   weights           every group member weight 1 (random order per fetch), "a,a,b" gives a weight 2
 *   control chars     "foo\n", "b\rar", "a\tb" refused with exit 2, naming the argument
 *   default           a known queue for classes that name none: '*' '*' gives two children on it
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT, TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir, workdirs } from "../helpers/fixtures.js";
import { giveUpAfter } from "../helpers/timing.js";
import { pino } from "pino";
import { dryRunCommand } from "../../src/cli/tsqCluster.js";

const handle = useRedis();
const GITLAB_WORKERS = join(ROOT, "dist/test/fixtures/gitlabWorkers.js");
const app = workdirs("tsq-gitlab-parity");

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `tsq-cluster <args> --dryrun` to completion in this process, in a fresh directory (with `config`
 * as config/tsq.yml): one module load for the many command lines here. Its log lines go to stdout
 * before the plan, as the binary's do; `binaryDryRun` checks the binary prints the same.
 */
async function cluster(args: string[], config?: string): Promise<Run> {
  let logged = "";
  const logger = pino({ base: { role: "supervisor" } }, { write: (line: string) => void (logged += line) });
  const env = { ...process.env, REDIS_URL: handle.url, TSQ_CONCURRENCY: "" };
  const run = await dryRunCommand(args, env, app(config), logger);
  return { ...run, stdout: logged + run.stdout };
}

/** The same through the real binary, in its own process. */
function binaryDryRun(args: string[], config?: string): Run {
  const result = spawnSync(process.execPath, [join(ROOT, "bin/tsq-cluster.js"), ...args], {
    cwd: app(config),
    env: { ...process.env, REDIS_URL: handle.url, TSQ_CONCURRENCY: "" },
    encoding: "utf8",
    timeout: giveUpAfter(30_000),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(run: Run): string[] {
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trimEnd().split("\n");
}

/** The queue names of each --dryrun line, in plan order. */
function planQueues(run: Run): string[][] {
  return ok(run).map((line) => {
    const list = /: queues (.*); concurrency/.exec(line)?.[1] ?? "";
    return list.split(", ").map((entry) => entry.replace(/ \(weight \d+\)$/, ""));
  });
}

/** The concurrency figure of each --dryrun line. */
function planConcurrency(run: Run): number[] {
  return ok(run).map((line) => Number(/; concurrency (\d+)/.exec(line)?.[1]));
}

const KNOWN = ["a", "b", "c", "cronjob:x", "cronjob:y"];

describe("-n/--negate: each group is every known queue it does not select", () => {
  test("a name, a namespace and a comma group, negated in turn (known = Redis + default)", async () => {
    await handle.redis.sadd("queues", ...KNOWN);
    assert.deepEqual(planQueues(await cluster(["-n", "a", "cronjob", "b,c", "--dryrun"])), [
      ["b", "c", "cronjob:x", "cronjob:y", "default"],
      ["a", "b", "c", "default"],
      ["a", "cronjob:x", "cronjob:y", "default"],
    ]);
    // GitLab passes each negated queue with weight 1.
    assert.equal(
      ok(await cluster(["--negate", "cronjob,default", "-d"]))[0],
      'child 0 (group 0 "cronjob,default"): queues a (weight 1), b (weight 1), c (weight 1); concurrency 4 (3 queues + 1)',
    );
  });

  test("a query: the negated group is exactly the known queues the query does not select", async () => {
    const selected = ok(await cluster(["-r", GITLAB_WORKERS, "urgency=high", "--list-queues"]));
    const all = ok(await cluster(["-r", GITLAB_WORKERS, "*", "--list-queues"]));
    const negated = ok(await cluster(["-r", GITLAB_WORKERS, "-n", "urgency=high", "--list-queues"]));
    assert.ok(selected.length > 0 && negated.length > 0);
    assert.deepEqual(
      negated,
      all.filter((queue) => !selected.includes(queue)),
    );
    // High-urgency classes that name no queue go to default, so it is left out; a namespace query keeps it.
    assert.ok(selected.includes("default") && !negated.includes("default"));
    const notCron = ok(await cluster(["-r", GITLAB_WORKERS, "-n", "queue_namespace=cronjob", "--list-queues"]));
    assert.deepEqual(
      notCron,
      all.filter((queue) => !queue.startsWith("cronjob:")),
    );
    assert.ok(notCron.includes("default"));
  });

  test("the module's classes count as known queues, and a group that leaves nothing exits 2", async () => {
    await handle.redis.sadd("queues", "a");
    assert.deepEqual(planQueues(await cluster(["-r", TEST_JOBS, "-n", "a", "--dryrun"])), [["default"]]);
    const none = await cluster(["-n", "a,default", "--dryrun"]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /queue group 0 \("a,default"\) with -n\/--negate leaves no queue/);
    const noGroups = await cluster(["-n", "--dryrun"]);
    assert.equal(noGroups.status, 2);
    assert.match(noGroups.stderr, /-n\/--negate needs queue groups/);
  });
});

describe("concurrency from the group's size (GitLab 16.x: queues + 1, clamped)", () => {
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(",");
  const groups = [names(1, "one"), names(5, "five"), names(60, "sixty")];
  const table: [string, string[], number[]][] = [
    ["defaults: -m 20, --min-concurrency 0", [], [2, 6, 20]],
    ["-m 0: no maximum", ["-m", "0"], [2, 6, 61]],
    ["-m 4", ["--max-concurrency", "4"], [2, 4, 4]],
    ["--min-concurrency 10", ["--min-concurrency", "10"], [10, 10, 20]],
    [
      "--min-concurrency 10 -m 0: GitLab's quirk, the minimum never applies",
      ["--min-concurrency", "10", "-m", "0"],
      [2, 6, 61],
    ],
    ["--min-concurrency 30 -m 20: the maximum wins", ["--min-concurrency", "30", "-m", "20"], [20, 20, 20]],
    ["-c 7 beats -m and --min-concurrency", ["-c", "7", "-m", "3", "--min-concurrency", "10"], [7, 7, 7]],
  ];
  for (const [name, flags, expected] of table) {
    test(`${name}: groups of 1, 5, 60 queues get ${expected.join(", ")}`, async () => {
      assert.deepEqual(planConcurrency(await cluster([...groups, ...flags, "--dryrun"])), expected);
    });
  }

  test("config cluster.max_concurrency / min_concurrency, and a flag beats them; config concurrency is fixed", async () => {
    const config = "cluster:\n  max_concurrency: 8\n  min_concurrency: 3\n";
    assert.deepEqual(planConcurrency(await cluster([...groups, "--dryrun"], config)), [3, 6, 8]);
    assert.deepEqual(planConcurrency(await cluster([...groups, "-m", "30", "--dryrun"], config)), [3, 6, 30]);
    assert.deepEqual(planConcurrency(await cluster([...groups, "--dryrun"], "concurrency: 5\n")), [5, 5, 5]);
  });

  test("--dryrun says why each figure", async () => {
    assert.deepEqual(
      ok(await cluster(["a,a,b", groups[2]!, "-c", "9", "--dryrun"])).map((l) => l.replace(/.*; concurrency /, "")),
      ["9 (fixed)", "9 (fixed)"],
    );
    assert.deepEqual(
      ok(await cluster(["a,a,b", groups[2]!, "--dryrun"])).map((l) => l.replace(/.*; concurrency /, "")),
      ["4 (3 queues + 1)", "20 (60 queues + 1, capped by -m 20)"],
    );
  });
});

describe("weights: group members weight 1 (random order per fetch), as GitLab's -q name,1", () => {
  test("plain, repeated and query groups in the plan; --strict-order drops the weights", async () => {
    await handle.redis.sadd("queues", ...KNOWN);
    assert.deepEqual(ok(await cluster(["a,b", "a,a,b", "cronjob", "--dryrun"])), [
      'child 0 (group 0 "a,b"): queues a (weight 1), b (weight 1); concurrency 3 (2 queues + 1)',
      'child 1 (group 1 "a,a,b"): queues a (weight 2), b (weight 1); concurrency 4 (3 queues + 1)',
      'child 2 (group 2 "cronjob"): queues cronjob (weight 1), cronjob:x (weight 1), cronjob:y (weight 1); concurrency 4 (3 queues + 1)',
    ]);
    const query = ok(await cluster(["-r", GITLAB_WORKERS, "queue_namespace=cronjob", "--dryrun"]));
    assert.match(
      query[0]!,
      /queues cronjob:prune_old_events \(weight 1\), cronjob:remove_expired_members \(weight 1\), /,
    );
    assert.deepEqual(ok(await cluster(["a,a,b", "--strict-order", "--dryrun"])), [
      'child 0 (group 0 "a,a,b"): queues a, b; concurrency 4 (3 queues + 1)',
    ]);
  });

  test("a real child serves the last queue of a 40-queue group while the first is still full", async (t) => {
    const queues = Array.from({ length: 40 }, (_, i) => `q${String(i).padStart(2, "0")}`);
    const PER_QUEUE = 50;
    for (const queue of queues)
      await pushJobs(
        handle.url,
        "RecordJob",
        Array.from({ length: PER_QUEUE }, (_, i) => [i]),
        queue,
      );
    const dir = scratchDir("tsq-parity-cfg");
    writeFileSync(join(dir, "tsq.yml"), "heartbeat_interval: 1\n");
    const proc = startTsq(
      [queues.join(","), "-r", TEST_JOBS, "-c", "2", "-t", "2", "-C", join(dir, "tsq.yml"), "--metrics-port", "0"],
      { REDIS_URL: handle.url },
      "bin/tsq-cluster.js",
    );
    t.after(async () => void (await proc.stop(15_000)));
    const last = queues.at(-1)!;
    // With a strict order, q39 would wait for the 1,950 jobs of q00..q38; GitLab's weight 1 shuffles per fetch.
    const firstLeft = await eventually(
      async () => {
        const ran = await handle.redis.lrange("ran", 0, -1);
        if (!ran.some((entry) => (JSON.parse(entry) as { queue?: string }).queue === last)) return undefined;
        return { left: await handle.redis.llen(`queue:${queues[0]}`), ran: ran.length };
      },
      60_000,
      `a job of ${last} ran; output:\n${proc.output().slice(-2000)}`,
      50,
    );
    console.log(
      `first ${last} job after ${firstLeft.ran} jobs; ${queues[0]} still held ${firstLeft.left}/${PER_QUEUE}`,
    );
    assert.ok(firstLeft.left > 0, `${queues[0]} was emptied before ${last} was served`);
    assert.equal(await proc.stop(15_000), 0);
  });
});

describe("control characters in groups and queue names are refused (exit 2), plain spaces trimmed", () => {
  const cases: [string[], string][] = [
    [["foo\n"], 'queue group 0 ("foo\\n") contains a newline (\\n); remove it'],
    [["a", "b\rar"], 'queue group 1 ("b\\rar") contains a carriage return (\\r); remove it'],
    [["a\tb"], 'queue group 0 ("a\\tb") contains a tab (\\t); remove it'],
    [["urgency=high\n"], 'queue group 0 ("urgency=high\\n") contains a newline (\\n); remove it'],
    [["-q", "critical\n"], '-q "critical\\n" contains a newline (\\n); remove it'],
  ];
  for (const [args, message] of cases) {
    test(`${JSON.stringify(args)}`, async () => {
      const run = await cluster([...args, "--dryrun"]);
      assert.equal(run.status, 2, run.stdout);
      assert.equal(run.stderr, `tsq-cluster: ${message}\n`);
      assert.equal(await handle.redis.scard("processes"), 0);
    });
  }

  test("in cluster.groups of the config file, naming the file", async () => {
    const run = await cluster(["--dryrun"], 'cluster:\n  groups: ["a", "foo\\n"]\n');
    assert.equal(run.status, 2);
    assert.equal(
      run.stderr,
      'tsq-cluster: config/tsq.yml: cluster.groups: queue group 1 ("foo\\n") contains a newline (\\n); remove it\n',
    );
  });

  test("plain spaces around names are still trimmed", async () => {
    assert.deepEqual(planQueues(await cluster([" a , b ", "--dryrun"])), [["a", "b"]]);
  });
});

describe("default is a known queue for classes that name no queue", () => {
  test("'*' '*' with queue-less classes and an empty Redis: two children on default", async () => {
    assert.deepEqual(ok(await cluster(["-r", TEST_JOBS, "*", "*", "--dryrun"])), [
      'child 0 (group 0 "*"): queues default (weight 1); concurrency 2 (1 queue + 1)',
      'child 1 (group 1 "*"): queues default (weight 1); concurrency 2 (1 queue + 1)',
    ]);
  });
});

describe("--list-queues with several groups prints each group's queues", () => {
  test("a blank line between groups; -d is --dryrun", async () => {
    await handle.redis.sadd("queues", ...KNOWN);
    assert.equal(
      (await cluster(["b,a", "cronjob", "c", "--processes", "2", "--list-queues"])).stdout,
      "a\nb\n\ncronjob\ncronjob:x\ncronjob:y\n\nc\n",
    );
    assert.deepEqual(ok(await cluster(["c", "-d"])), [
      'child 0 (group 0 "c"): queues c (weight 1); concurrency 2 (1 queue + 1)',
    ]);
  });
});

test("the binary prints what the in-process runs above print: a plan, a log line, a refusal", async () => {
  await handle.redis.sadd("queues", "bad\u0007name");
  const binary = binaryDryRun(["-n", "cronjob", "--dryrun"]);
  assert.match(binary.stdout, /leaving it out of the plan/, "the bad name is logged");
  sameOutput(binary, await cluster(["-n", "cronjob", "--dryrun"]));
  sameOutput(binaryDryRun(["-n", "--dryrun"]), await cluster(["-n", "--dryrun"]));
  await handle.redis.srem("queues", "bad\u0007name");
});

/**
 * Same exit status, stderr, plan lines and log lines (by level and message: pid and time differ). Each
 * kind in its order; not interleaved alike, as the binary writes its log lines at the end of a turn.
 */
function sameOutput(binary: Run, inProcess: Run): void {
  const shape = (run: Run) => {
    const lines = run.stdout.trimEnd().split("\n");
    return {
      status: run.status,
      stderr: run.stderr,
      plan: lines.filter((line) => !line.startsWith("{")),
      logged: lines
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.stringify(pick(JSON.parse(line) as Record<string, unknown>))),
    };
  };
  assert.deepEqual(shape(binary), shape(inProcess));
}

function pick(line: Record<string, unknown>): Record<string, unknown> {
  return { level: line.level, msg: line.msg, role: line.role };
}
