// A node:test reporter: at the end of a run, the slowest test files (each file's whole process, from
// start to exit, seconds) and the slowest single tests, so the suite's time is spent where it counts.
//
// Every failed test is listed last, with its file and the first lines of its error, so the tail of a
// long CI log says what failed without a search through thousands of TAP lines.
//
// It also finds files whose process stayed alive after its last test: a worker, timer, socket or child
// process a test left behind holds its slot of the run until it ends on its own, and leaks the same way
// in an app. With TSQ_TEST_REPORT=<path>, the run's figures are written there as JSON for
// scripts/run-tests.mjs, which fails the run on such a file; with TSQ_TEST_DURATIONS=<path>, every
// file's seconds, keyed like "test/cli/tsqctl-top.test" (test/durations.json orders the next runs).
import { writeFileSync } from "node:fs";
import { relative } from "node:path";

const SHOWN = 12;

export default async function* durations(source) {
  const files = new Map(); // file -> ms from its process's start to its exit
  const lastTestAt = new Map(); // file -> Date.now() when its last top-level test ended
  const lingered = new Map(); // file -> ms its process lived after its last top-level test
  const tests = [];
  const failed = []; // { file, name, error } for each failed test or file, in the order they failed
  for await (const event of source) {
    const { data } = event;
    if (data?.file === undefined) continue;
    const file = relative(process.cwd(), data.file);
    if (event.type === "test:fail") failed.push({ file, name: data.name, error: describe(data.details?.error) });
    if (event.type === "test:complete" && data.name === data.file) {
      files.set(file, data.details?.duration_ms ?? 0);
      if (lastTestAt.has(file)) lingered.set(file, Date.now() - lastTestAt.get(file));
    } else if ((event.type === "test:pass" || event.type === "test:fail") && data.nesting === 0) {
      tests.push({ file, name: data.name, ms: data.details?.duration_ms ?? 0 });
      lastTestAt.set(file, Date.now());
    }
  }
  const byFile = [...files].sort((a, b) => b[1] - a[1]);
  const total = byFile.reduce((sum, [, ms]) => sum + ms, 0);
  const seconds = (ms) => (ms / 1000).toFixed(1).padStart(7);
  yield `\nslowest test files (of ${byFile.length}; ${(total / 1000).toFixed(0)} s of test processes in all):\n`;
  for (const [file, ms] of byFile.slice(0, SHOWN)) yield `${seconds(ms)} s  ${file}\n`;
  yield "slowest tests:\n";
  for (const { file, name, ms } of tests.sort((a, b) => b.ms - a.ms).slice(0, SHOWN))
    yield `${seconds(ms)} s  ${file}: ${name.slice(0, 100)}\n`;
  if (failed.length > 0) {
    yield `\nfailed (${failed.length}):\n`;
    for (const { file, name, error } of failed) yield `  ${file}: ${name.slice(0, 160)}\n${error}`;
  }
  const key = (file) => file.replace(/^dist\//, "").replace(/\.js$/, "");
  const tenths = (ms) => Math.round(ms / 100) / 10;
  if (process.env.TSQ_TEST_REPORT) {
    const report = { lingered: Object.fromEntries([...lingered].map(([file, ms]) => [key(file), tenths(ms)])) };
    writeFileSync(process.env.TSQ_TEST_REPORT, JSON.stringify(report));
  }
  if (process.env.TSQ_TEST_DURATIONS) {
    const table = Object.fromEntries(byFile.map(([file, ms]) => [key(file), tenths(ms)]));
    writeFileSync(process.env.TSQ_TEST_DURATIONS, `${JSON.stringify(table, null, 2)}\n`);
  }
}

// The first lines of a failure's cause: node:test wraps the test's own error in `cause`.
function describe(error) {
  const cause = error?.cause ?? error;
  const text = String(cause?.stack ?? cause?.message ?? cause ?? "no error given");
  const lines = text.split("\n").slice(0, 6);
  return lines.map((line) => `      ${line.slice(0, 300)}\n`).join("");
}
