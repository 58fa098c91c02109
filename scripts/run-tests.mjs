// Runs every compiled test file with Node's built-in test runner. Each file runs in its own process
// with its own private redis-server, so several files can run at once.
import { readdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const testRoot = join(root, "dist/test");

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith(".test.js") ? [path] : [];
  });
}

const filter = process.argv.slice(2);
const files = collect(testRoot)
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort();
if (files.length === 0) {
  console.error(`no test files found under ${testRoot}${filter.length ? ` matching ${filter.join(", ")}` : ""}`);
  process.exit(1);
}
// Files at once: one per core, at least 2 (most files wait on timers and processes more than they
// compute) and at most 4 (each starts a redis-server and often several worker processes).
const concurrency = process.env.TSQ_TEST_CONCURRENCY ?? String(Math.min(Math.max(availableParallelism(), 2), 4));
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
