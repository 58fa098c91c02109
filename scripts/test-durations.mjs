// A node:test reporter: at the end of a run, the slowest test files (their top-level tests' time
// summed, seconds) and the slowest single tests, so the suite's time can be spent where it counts.
// With TSQ_TEST_DURATIONS=<path>, every file's seconds are also written there as JSON, keyed like
// "test/cli/tsqctl-top.test": test/durations.json in that form orders the next runs, longest first.
import { writeFileSync } from "node:fs";
import { relative } from "node:path";

const SHOWN = 12;

export default async function* durations(source) {
  const files = new Map();
  const tests = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { data } = event;
    if (data.nesting !== 0 || data.file === undefined) continue;
    const ms = data.details?.duration_ms ?? 0;
    const file = relative(process.cwd(), data.file);
    files.set(file, (files.get(file) ?? 0) + ms);
    tests.push({ file, name: data.name, ms });
  }
  const byFile = [...files].sort((a, b) => b[1] - a[1]);
  const total = byFile.reduce((sum, [, ms]) => sum + ms, 0);
  const seconds = (ms) => (ms / 1000).toFixed(1).padStart(7);
  yield `\nslowest test files (of ${byFile.length}; ${(total / 1000).toFixed(0)} s of tests in all):\n`;
  for (const [file, ms] of byFile.slice(0, SHOWN)) yield `${seconds(ms)} s  ${file}\n`;
  yield "slowest tests:\n";
  for (const { file, name, ms } of tests.sort((a, b) => b.ms - a.ms).slice(0, SHOWN))
    yield `${seconds(ms)} s  ${file}: ${name.slice(0, 100)}\n`;
  if (process.env.TSQ_TEST_DURATIONS)
    writeFileSync(
      process.env.TSQ_TEST_DURATIONS,
      `${JSON.stringify(Object.fromEntries(byFile.map(([file, ms]) => [file.replace(/^dist\//, "").replace(/\.js$/, ""), Math.round(ms / 100) / 10])), null, 2)}\n`,
    );
}
