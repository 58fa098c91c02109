// Runs the compiled test files of one tier with Node's built-in test runner. Each file runs in its own process
// with its own private redis-server, so several files can run at once.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { availableParallelism, cpus, tmpdir } from "node:os";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const testRoot = join(root, "dist/test");
// Seconds each file took in a recent whole run, keyed like "test/cli/tsqctl-top.test"; refreshed with
// `TSQ_TEST_DURATIONS=test/durations.json npm test`.
const durationsFile = join(root, "test/durations.json");

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith(".test.js") ? [path] : [];
  });
}

/**
 * Cores left idle by the rest of the machine: the most seen in four half-second samples. Work that holds
 * a core (another run, a build, a spin loop) shows in every sample; a blip does not halve the run's
 * concurrency (right after the build, the kernel writing the compiled files back took a core for a
 * moment, and a quiet machine ran 4 files at once instead of 8).
 */
async function idleCores() {
  const sample = () =>
    cpus().map(({ times }) => ({ idle: times.idle, total: Object.values(times).reduce((x, y) => x + y, 0) }));
  let most = 0;
  for (let i = 0; i < 4; i++) {
    const before = sample();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = sample();
    const idle = after.reduce(
      (sum, cpu, n) => sum + (cpu.idle - before[n].idle) / Math.max(cpu.total - before[n].total, 1),
      0,
    );
    most = Math.max(most, idle);
  }
  return Math.min(most, availableParallelism());
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, "utf8"));
  } catch {
    return {};
  }
}

// Two tiers. The fast tier (`npm test`) is every file but `*.slow.test.*`; the slow tier
// (`npm run test:slow`) holds the chaos, fault, soak and packaging files, each of which proves what a
// short file cannot (a 20,000-job run under SIGKILLs, a Sentinel or Redis failover, a 90 s mixed cron
// fleet, the packed tarball in fresh apps). `--tier all` runs both; a file named in the filter runs
// whatever its tier.
const args = process.argv.slice(2);
const tierAt = args.indexOf("--tier");
const tier = tierAt === -1 ? "fast" : args[tierAt + 1];
if (!["fast", "slow", "all"].includes(tier)) {
  console.error(`--tier must be fast, slow or all (got ${JSON.stringify(tier)})`);
  process.exit(2);
}
const filter = args.filter((_, i) => tierAt === -1 || (i !== tierAt && i !== tierAt + 1));
const isSlow = (file) => file.endsWith(".slow.test.js");
const inTier = (file) => filter.length > 0 || tier === "all" || (tier === "slow") === isSlow(file);
const files = collect(testRoot).filter(
  (f) => inTier(f) && (filter.length === 0 || filter.some((word) => f.includes(word))),
);
if (files.length === 0) {
  console.error(
    `no ${tier} test files found under ${testRoot}${filter.length ? ` matching ${filter.join(", ")}` : ""}`,
  );
  process.exit(1);
}
// Longest first: the runner starts files in the order given, so a long file started last would run
// alone at the end while the other slots sit idle. A file not in the table (new) counts as longest.
const durations = readDurations();
const seconds = (file) => durations[relative(join(root, "dist"), file).replace(/\.js$/, "")] ?? Infinity;
files.sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
// Files at once: most files wait on timers, Redis and child processes far more than they compute, so
// four per idle core, 2 to 8 in all. Cores busy with other work count less: a loaded machine gets
// fewer files at once rather than every file's timing squeezed.
const concurrency =
  process.env.TSQ_TEST_CONCURRENCY ?? String(Math.min(Math.max(Math.round(4 * (await idleCores())), 2), 8));
console.error(
  `running ${files.length} test files (${filter.length ? "filtered" : `${tier} tier`}), ${concurrency} at once`,
);
// Seconds a file's process may live on after its last test: its `after` hooks stop workers and Redis.
// Longer means something the tests started was left running (see scripts/test-durations.mjs).
const LINGER_LIMIT_S = Number(process.env.TSQ_TEST_LINGER_LIMIT ?? 10);
const reportDir = mkdtempSync(join(tmpdir(), "tsq-test-report-"));
const reportFile = join(reportDir, "report.json");
const result = spawnSync(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${concurrency}`,
    "--test-timeout=300000",
    `--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(root, "scripts/test-durations.mjs")}`,
    "--test-reporter-destination=stderr",
    ...files,
  ],
  { stdio: "inherit", cwd: root, env: { ...process.env, TSQ_TEST_REPORT: reportFile } },
);
let lingered = [];
try {
  const report = JSON.parse(readFileSync(reportFile, "utf8"));
  lingered = Object.entries(report.lingered).sort((a, b) => b[1] - a[1]);
} catch {
  // No report: the run itself failed to start or was killed; its status says so.
}
rmSync(reportDir, { recursive: true, force: true });
const leaks = lingered.filter(([, s]) => s > LINGER_LIMIT_S);
for (const [file, s] of lingered.filter(([, s]) => s > 2).slice(0, 12))
  console.error(`${s.toFixed(1).padStart(7)} s after its last test: ${file}`);
if (leaks.length > 0) {
  console.error(
    `\n${leaks.length} test file(s) stayed alive more than ${LINGER_LIMIT_S} s after their last test: a worker, ` +
      "timer, socket or child process was left running. Stop it in the test's cleanup (t.after) or unref it.",
  );
  process.exit(result.status || 1);
}
process.exit(result.status ?? 1);
