/**
 * The packed tarball as an application installs it: what it holds, and two fresh apps (a strict
 * NodeNext TypeScript ES module app and a CommonJS one, the files of test/package/apps) that start a
 * worker from code, run a job and stop, and whose own tests use tsq/testing's fake and inline modes
 * under Vitest, Jest and node:test. The tarball is packed from the dist/ the test run just built
 * (`--ignore-scripts`: prepack would rebuild dist/ under the other test files' feet).
 *
 * Network: the apps install tsq's dependencies from npm's cache (`--prefer-offline`: the registry only
 * for what the cache lacks); Vitest, Jest and @types/node are links to this project's copies.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { blockErrors, docBlocks, docFiles } from "./docBlocks.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { giveUpAfter } from "../helpers/timing.js";

const handle = useRedis();
const APPS = join(ROOT, "test/package/apps");
const work = mkdtempSync(join(tmpdir(), "tsq-tarball-"));
let tarball = "";

before(() => {
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: ROOT,
    encoding: "utf8",
  });
  const [info] = JSON.parse(out) as { filename: string }[];
  tarball = join(work, info!.filename);
});
after(() => rmSync(work, { recursive: true, force: true }));

function listing(): string[] {
  return execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n");
}

/** Runs `args` with node in `dir`, pointed at the test's Redis; a minute at most. */
function run(dir: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  // Without NODE_TEST_CONTEXT, which this file's runner sets: with it, the app's own `node --test`
  // would report to this runner in its private format instead of printing TAP.
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  return spawnSync(process.execPath, args, {
    cwd: dir,
    encoding: "utf8",
    timeout: giveUpAfter(60_000),
    env: { ...env, REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
  });
}

/** Links `node_modules/<name>` of the app to this project's copy: the app's own dev dependency in real life. */
function linkDevDependency(dir: string, name: string): void {
  if (existsSync(join(dir, "node_modules", name))) return;
  mkdirSync(dirname(join(dir, "node_modules", name)), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name));
}

const apps = new Map<string, string>();

/**
 * The app of test/package/apps/<fixture> in a folder of its own, with tsq installed from the tarball
 * and Vitest and Jest linked (after the install, which would prune a link made before); made once per run.
 */
function app(fixture: "esm" | "cjs", packageJson: object): string {
  const made = apps.get(fixture);
  if (made) return made;
  const dir = join(work, `${fixture}-app`);
  cpSync(join(APPS, fixture), dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `${fixture}-app`, private: true, ...packageJson }));
  const install = spawnSync(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball],
    { cwd: dir, encoding: "utf8" },
  );
  assert.equal(install.status, 0, `npm install of the tarball failed: ${install.stderr}`);
  linkDevDependency(dir, "vitest");
  linkDevDependency(dir, "jest");
  // The CommonJS app's Jest runs its tests with Node's own require(): see jest() below.
  linkDevDependency(dir, fixture === "esm" ? "@jest/globals" : "jest-light-runner");
  apps.set(fixture, dir);
  return dir;
}

/** The ES module app, compiled by tsc with its strict NodeNext tsconfig (its Vitest tests included). */
function esmApp(): string {
  const compiled = apps.has("esm");
  const dir = app("esm", { type: "module" });
  if (compiled) return dir;
  linkDevDependency(dir, "@types/node");
  const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], {
    encoding: "utf8",
  });
  assert.equal(tsc.status, 0, `the app does not compile: ${tsc.stdout}${tsc.stderr}`);
  return dir;
}

/** The passed count and test names of a Vitest or Jest JSON report (both write Jest's shape). */
function readReport(report: string): { passed: number; names: string[] } {
  const json = JSON.parse(readFileSync(report, "utf8")) as {
    numPassedTests: number;
    testResults: { assertionResults: { title: string }[] }[];
  };
  const names = json.testResults.flatMap((file) => file.assertionResults.map((a) => a.title));
  return { passed: json.numPassedTests, names };
}

/** Runs the app's Vitest suite (its test/ folder); the counts of its JSON report. */
function vitest(dir: string): { passed: number; names: string[] } {
  const report = join(dir, "vitest-report.json");
  const result = run(dir, [
    join(dir, "node_modules/vitest/vitest.mjs"),
    "run",
    "--dir",
    "test",
    "--reporter=json",
    `--outputFile=${report}`,
  ]);
  assert.equal(result.status, 0, `vitest failed:\n${result.stdout}${result.stderr}`);
  return readReport(report);
}

/**
 * Runs the app's Jest suite, its jest/ folder alone (a wider root would pick up the Vitest files too;
 * the TypeScript app's as compiled to out/jest); the counts of its JSON report. tsq is an ES module. The ES module app imports it, which Jest's module
 * system does under --experimental-vm-modules. The CommonJS app require()s it, which Jest's module
 * system does only on Node 24.9+, so its tests run under jest-light-runner: Node's own require(), which
 * loads an ES module from Node 20.19.
 */
function jest(dir: string, fixture: "esm" | "cjs"): { passed: number; names: string[] } {
  const report = join(dir, "jest-report.json");
  const esm = fixture === "esm";
  const result = run(dir, [
    ...(esm ? ["--experimental-vm-modules"] : []),
    join(dir, "node_modules/jest/bin/jest.js"),
    "--ci",
    "--no-watchman",
    `--rootDir=${join(dir, esm ? "out/jest" : "jest")}`,
    `--cacheDirectory=${join(dir, ".jest-cache")}`,
    ...(esm ? [] : ["--runner=jest-light-runner"]),
    "--json",
    `--outputFile=${report}`,
  ]);
  assert.equal(result.status, 0, `jest failed:\n${result.stdout}${result.stderr}`);
  return readReport(report);
}

/** Runs one node:test file of the app; the number of tests that passed. */
function nodeTest(dir: string, file: string): number {
  const result = run(dir, ["--test", "--test-reporter=tap", file]);
  assert.equal(result.status, 0, `node --test ${file} failed:\n${result.stdout}${result.stderr}`);
  return Number(/^# pass (\d+)$/m.exec(result.stdout)?.[1]);
}

const MODE_TESTS = [
  "fake: the push is held with its arguments until drain() runs it",
  "inline: perform has run when the push resolves; a Date argument fails as in production",
];

test("the tarball holds the compiled package and its docs, no screenshots, no source map pointing at a missing file", () => {
  const files = listing();
  assert.ok(files.includes("package/dist/src/index.js"));
  assert.ok(files.includes("package/dist/src/index.d.ts"));
  assert.ok(
    files.some((f) => f.endsWith(".lua")),
    "Lua scripts are shipped",
  );
  assert.ok(!files.some((f) => f.startsWith("package/docs/images/")), "screenshots stay out");
  assert.ok(!files.some((f) => f.startsWith("package/dist/test/")), "tests stay out");
  // No source map and no sourceMappingURL pointing at a file the tarball does not have.
  const unpacked = join(work, "unpacked");
  mkdirSync(unpacked, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", unpacked]);
  const dangling: string[] = [];
  for (const file of files.filter((f) => /\.(js|d\.ts|map)$/.test(f))) {
    const path = join(unpacked, file);
    const text = readFileSync(path, "utf8");
    const targets = file.endsWith(".map")
      ? (JSON.parse(text) as { sources: string[] }).sources
      : [...text.matchAll(/^\/\/# sourceMappingURL=(\S+)$/gm)].map((m) => m[1]!);
    for (const target of targets) if (!existsSync(join(dirname(path), target))) dangling.push(`${file} → ${target}`);
  }
  assert.deepEqual(dangling, [], "maps and map references to files the tarball lacks");
  // A link of the shipped Markdown to a file (screenshots aside, kept out on purpose) reaches a shipped file.
  const broken: string[] = [];
  for (const doc of files.filter((f) => f.endsWith(".md"))) {
    const text = readFileSync(join(unpacked, doc), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target!) || /\.(png|svg|gif)$/.test(target!)) continue;
      if (!existsSync(join(unpacked, dirname(doc), target!))) broken.push(`${doc} → ${target}`);
    }
  }
  assert.deepEqual(broken, [], "links of the shipped docs to files the tarball lacks");
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dependency of Object.keys(manifest.dependencies)) {
    const used = spawnSync("grep", ["-rlF", `"${dependency}"`, join(ROOT, "dist/src")], { encoding: "utf8" });
    assert.ok(used.stdout.trim() !== "", `runtime dependency ${dependency} is imported by dist/src`);
  }
});

test("a strict NodeNext TypeScript app starts a worker from code, runs a job and stops", () => {
  const result = run(esmApp(), ["out/src/worker.js"]);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /hello esm/);
  assert.match(result.stdout, /RAN [0-9a-f]{24} done/);
});

test("the TypeScript app's Vitest and node:test tests use fake and inline modes", () => {
  const dir = esmApp();
  const suite = vitest(dir);
  assert.deepEqual(
    suite.names.sort(),
    [...MODE_TESTS, "draining runs the held jobs", "signing up enqueues a welcome email"].sort(),
  );
  assert.equal(suite.passed, 4);
  assert.equal(nodeTest(dir, "out/node-test/modes.test.js"), 2);
});

test("the TypeScript app's Jest tests, run as ES modules, use fake and inline modes", () => {
  const suite = jest(esmApp(), "esm");
  assert.deepEqual(suite.names.sort(), [...MODE_TESTS].sort());
  assert.equal(suite.passed, 2);
});

test("a CommonJS app require()s the package, starts a worker, runs a job and stops", () => {
  const result = run(app("cjs", {}), ["src/worker.js"]);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /hello cjs/);
  assert.match(result.stdout, /RAN [0-9a-f]{24} done/);
});

test("the CommonJS app's Vitest and node:test tests use fake and inline modes", () => {
  const dir = app("cjs", {});
  const suite = vitest(dir);
  assert.deepEqual(suite.names.sort(), [...MODE_TESTS].sort());
  assert.equal(suite.passed, 2);
  assert.equal(nodeTest(dir, "node-test/modes.test.js"), 2);
});

test("the CommonJS app's Jest tests use fake and inline modes", () => {
  const suite = jest(app("cjs", {}), "cjs");
  assert.deepEqual(suite.names.sort(), [...MODE_TESTS].sort());
  assert.equal(suite.passed, 2);
});

test("an app serves the dashboard's charts from the installed package: uPlot resolves from its node_modules", () => {
  const dir = esmApp();
  writeFileSync(
    join(dir, "web.js"),
    `import { createServer } from "node:http";
import { connectRedis } from "tsq/api";
import { createWebHandler } from "tsq/web";

const redis = connectRedis(process.env.REDIS_URL);
const handler = createWebHandler({ redis, prefix: "/tsq" });
const server = createServer((req, res) => handler(req, res)).listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const base = "http://127.0.0.1:" + server.address().port + "/tsq";
for (const path of ["/assets/uplot.min.js", "/assets/uplot.min.css", "/assets/charts.js"]) {
  const res = await fetch(base + path);
  console.log("ASSET " + path + " " + res.status + " " + res.headers.get("content-type") + " " + (await res.text()).length);
}
const page = await (await fetch(base + "/")).text();
console.log("PAGE " + (page.includes('src="/tsq/assets/uplot.min.js"') ? "loads uplot" : "no uplot"));
server.close();
await handler.stop();
redis.disconnect();
`,
  );
  const result = run(dir, ["web.js"]);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /ASSET \/assets\/uplot\.min\.js 200 text\/javascript; charset=utf-8 [1-9]\d{4,}/);
  assert.match(result.stdout, /ASSET \/assets\/uplot\.min\.css 200 text\/css; charset=utf-8 [1-9]\d+/);
  assert.match(result.stdout, /ASSET \/assets\/charts\.js 200 text\/javascript; charset=utf-8 [1-9]\d+/);
  assert.match(result.stdout, /PAGE loads uplot/);
});

test("every ```ts block of README.md and docs/*.md compiles in a strict NodeNext app, one import of tsq bringing every feature's types", () => {
  // The TypeScript app with tsq installed from the tarball, and the web frameworks the blocks mount
  // the dashboard in; one tsc run over every block, each a module of its own (test/package/docBlocks.ts).
  const app = esmApp();
  const frameworks = ["express", "@types/express", "fastify", "koa", "@types/koa", "hono", "@hono/node-server"];
  for (const name of [...frameworks, "@nestjs/common", "@nestjs/core"]) linkDevDependency(app, name);
  const dir = join(app, "docs-blocks");
  const { blocks, skipped } = docBlocks(ROOT, docFiles(ROOT));
  for (const block of blocks) {
    mkdirSync(dirname(join(dir, block.file)), { recursive: true });
    writeFileSync(join(dir, block.file), block.text);
  }
  // A Markdown file's blocks that import `./jobs.js` without showing one get README's tour's HardJob.
  for (const folder of new Set(blocks.map((block) => dirname(block.file)))) {
    if (!blocks.some((block) => block.file === `${folder}/jobs.ts`))
      copyFileSync(join(APPS, "docs/jobs.ts"), join(dir, folder, "jobs.ts"));
  }
  for (const file of ["prelude.ts", "tsconfig.json"]) copyFileSync(join(APPS, "docs", file), join(dir, file));
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", ".", "--pretty", "false"],
    {
      cwd: dir,
      encoding: "utf8",
    },
  );
  const problems = blockErrors(`${tsc.stdout}${tsc.stderr}`, blocks);
  assert.deepEqual(problems, [], `doc blocks that do not compile:\n${problems.join("\n")}`);
  assert.ok(blocks.length >= 49, `only ${blocks.length} blocks compiled`);
  // Each exception says why. The example files are compiled (and run) where they live, and a test holds
  // each to its block word for word (test/testing/docs.test.ts, test/examples/auditTrail.test.ts); the
  // other exceptions are few.
  const noCompile = skipped.filter((s) => !s.reason.startsWith("the file "));
  assert.ok(
    noCompile.length <= 2,
    `blocks not compiled:\n${noCompile.map((s) => `${s.where}: ${s.reason}`).join("\n")}`,
  );
  // The blocks that quote a compile error really fail with it (docs/testing.md's typo and Date).
  assert.ok(blocks.filter((block) => block.expected.length > 0).length >= 2);
});
