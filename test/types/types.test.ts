/**
 * Type tests: test/types/cases compiles against the built package as an app sees it (`import from
 * "tsq"`, resolved through package.json "exports" to dist's declarations). Each `@ts-expect-error` line
 * must be needed (tsc reports one that is not), and with every one of them removed, tsc reports an
 * error on exactly the lines they guarded, the argument ones with tsq's readable reason.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const cases = join(root, "test/types/cases");
const tsc = join(root, "node_modules/typescript/bin/tsc");

function compile(project: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [tsc, "--noEmit", "--pretty", "false", "-p", project], {
    cwd: root,
    encoding: "utf8",
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** `file(line)` → the message of every error tsc reported there. */
function errorsByLine(output: string): Map<string, string[]> {
  const byLine = new Map<string, string[]>();
  for (const match of output.matchAll(/([\w.-]+\.ts)\((\d+),\d+\): error TS\d+: (.*)/g)) {
    const key = `${match[1]}:${match[2]}`;
    byLine.set(key, [...(byLine.get(key) ?? []), match[3]!]);
  }
  return byLine;
}

test("the type tests compile: every expected error occurs and correct code compiles", () => {
  const { status, output } = compile(join(cases, "tsconfig.json"));
  assert.equal(status, 0, `tsc reported:\n${output}`);
});

test("without the @ts-expect-error lines, each guarded line fails to compile, with a readable reason", () => {
  // A copy inside the package, so `import "tsq"` still resolves to this package by its own name.
  const copy = mkdtempSync(join(root, "test/types/.stripped-"));
  try {
    cpSync(join(cases, "tsconfig.json"), join(copy, "tsconfig.json"));
    const guarded: { key: string; why: string }[] = [];
    for (const file of readdirSync(cases).filter((name) => name.endsWith(".ts"))) {
      const lines = readFileSync(join(cases, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        const expect = /^\s*\/\/ @ts-expect-error -- (.*)$/.exec(line);
        if (!expect) return;
        lines[i] = ""; // blank, so line numbers stay
        guarded.push({ key: `${file}:${i + 2}`, why: expect[1]! });
      });
      writeFileSync(join(copy, file), lines.join("\n"));
    }
    assert.ok(guarded.length >= 16, `only ${guarded.length} expected errors found`);
    const { status, output } = compile(join(copy, "tsconfig.json"));
    assert.notEqual(status, 0);
    const errors = errorsByLine(output);
    for (const { key, why } of guarded) assert.ok(errors.has(key), `no error at ${key} (${why}):\n${output}`);
    assert.deepEqual(
      [...errors.keys()].filter((key) => !guarded.some((g) => g.key === key)),
      [],
      "errors on lines no @ts-expect-error guarded",
    );
    // The refusals of non-JSON arguments name the problem and the fix.
    const date = errors.get(guarded.find((g) => g.why === "a Date")!.key)!.join(" ");
    assert.match(date, /tsq: a Date is not JSON; pass date\.toISOString\(\) or epoch seconds/);
    const map = errors.get(guarded.find((g) => g.why === "a Map")!.key)!.join(" ");
    assert.match(map, /tsq: a Map is not JSON; pass Object\.fromEntries\(map\)/);
    const instance = errors.get(guarded.find((g) => g.why.startsWith("a class instance"))!.key)!.join(" ");
    assert.match(instance, /tsq: an object with methods \(norm\) is not JSON/);
    const typo = errors.get(guarded.find((g) => g.why === "a typo of `queue`")!.key)!.join(" ");
    assert.match(typo, /'queueu' does not exist/);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test("the package root loads every feature's type additions: each plugin.ts that augments tsq is imported bare by src/index.ts", () => {
  // A declaration file keeps a bare import only; without it an app's `import { Job } from "tsq"` lacks
  // the options (`result`) and members (`this.progress`) that feature adds.
  const index = readFileSync(join(root, "src/index.ts"), "utf8");
  const features = join(root, "src/features");
  const augmenting = readdirSync(features, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("plugin.ts"))
    .filter((file) => /^declare module /m.test(readFileSync(join(features, file), "utf8")));
  assert.ok(augmenting.length >= 6, `only ${augmenting.length} plugin.ts files augment tsq`);
  for (const file of augmenting) {
    const specifier = `./features/${file.replace(/\\/g, "/").replace(/\.ts$/, ".js")}`;
    assert.ok(index.includes(`\nimport "${specifier}";`), `src/index.ts does not import "${specifier}"`);
  }
});
