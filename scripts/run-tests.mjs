// Runs every compiled test file with Node's built-in test runner. Each file runs in its own process
// with its own private redis-server, so several files can run at once.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

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

function readDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, "utf8"));
  } catch {
    return {};
  }
}

const filter = process.argv.slice(2);
const files = collect(testRoot).filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)));
if (files.length === 0) {
  console.error(`no test files found under ${testRoot}${filter.length ? ` matching ${filter.join(", ")}` : ""}`);
  process.exit(1);
}
// Longest first: the runner starts files in the order given, so a long file started last would run
// alone at the end while the other slots sit idle. A file not in the table (new) counts as longest.
const durations = readDurations();
const seconds = (file) => durations[relative(join(root, "dist"), file).replace(/\.js$/, "")] ?? Infinity;
files.sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
// Files at once: most files wait on timers, Redis and child processes far more than they compute (a
// whole run keeps 2 cores about half busy at 4 files at once), so three per core, 4 to 8 in all.
const concurrency = process.env.TSQ_TEST_CONCURRENCY ?? String(Math.min(Math.max(availableParallelism() * 3, 4), 8));
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
  { stdio: "inherit", cwd: root },
);
process.exit(result.status ?? 1);
