/**
 * The packed tarball as an application installs it: what it holds, and two fresh apps (a strict
 * NodeNext TypeScript ES module app and a CommonJS one) that start a worker from code, run a job and
 * stop. The tarball is packed from the dist/ the test run just built (`--ignore-scripts`: prepack would
 * rebuild dist/ under the other test files' feet).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";

const handle = useRedis();
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

/** An app folder with tsq installed from the tarball, from npm's cache when it has the dependencies. */
function app(name: string, packageJson: object): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, ...packageJson }));
  const install = spawnSync(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball],
    { cwd: dir, encoding: "utf8" },
  );
  assert.equal(install.status, 0, `npm install of the tarball failed: ${install.stderr}`);
  return dir;
}

function run(dir: string, file: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [file], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
  });
}

test("the tarball holds the compiled package and its docs, no screenshots, no maps without their sources", () => {
  const files = listing();
  assert.ok(files.includes("package/dist/src/index.js"));
  assert.ok(files.includes("package/dist/src/index.d.ts"));
  assert.ok(
    files.some((f) => f.endsWith(".lua")),
    "Lua scripts are shipped",
  );
  assert.ok(!files.some((f) => f.startsWith("package/docs/images/")), "screenshots stay out");
  assert.ok(!files.some((f) => f.startsWith("package/dist/test/")), "tests stay out");
  const mapped = files.filter((f) => f.endsWith(".js.map"));
  for (const map of mapped.slice(0, 20)) {
    const text = execFileSync("tar", ["-xzOf", tarball, map], { encoding: "utf8" });
    const parsed = JSON.parse(text) as { sources: string[]; sourcesContent?: string[] };
    assert.equal(parsed.sourcesContent?.length, parsed.sources.length, `${map} carries its sources`);
  }
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dependency of Object.keys(manifest.dependencies)) {
    const used = spawnSync("grep", ["-rlF", `"${dependency}"`, join(ROOT, "dist/src")], { encoding: "utf8" });
    assert.ok(used.stdout.trim() !== "", `runtime dependency ${dependency} is imported by dist/src`);
  }
});

test("a strict NodeNext TypeScript app starts a worker from code, runs a job and stops", () => {
  const dir = app("esm-app", { type: "module" });
  // The app's own dev dependency in real life; here the project's copy.
  mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules/@types/node"), join(dir, "node_modules/@types/node"));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        outDir: "out",
      },
      files: ["app.ts"],
    }),
  );
  writeFileSync(
    join(dir, "app.ts"),
    `import { Job, Worker } from "tsq";

class Hello extends Job {
  perform(name: string) {
    console.log("hello " + name);
  }
}

const worker = new Worker({ redis: process.env.REDIS_URL, jobs: [Hello], queues: ["default"], concurrency: 2 });
const ended = new Promise<string>((resolve) => worker.on("job:end", (e) => resolve(e.status)));
await worker.start();
const jid = await Hello.performAsync("esm");
const status = await ended;
await worker.stop({ timeout: 1 });
console.log("RAN " + jid + " " + status);
process.exit(0);
`,
  );
  const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], {
    encoding: "utf8",
  });
  assert.equal(tsc.status, 0, `the app does not compile: ${tsc.stdout}${tsc.stderr}`);
  const result = run(dir, "out/app.js");
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /hello esm/);
  assert.match(result.stdout, /RAN [0-9a-f]{24} done/);
});

test("a CommonJS app require()s the package, starts a worker, runs a job and stops", () => {
  const dir = app("cjs-app", {});
  writeFileSync(
    join(dir, "app.js"),
    `"use strict";
const { Job, Worker } = require("tsq");

class Hello extends Job {
  perform(name) {
    console.log("hello " + name);
  }
}

async function main() {
  const worker = new Worker({ redis: process.env.REDIS_URL, jobs: [Hello], queues: ["default"] });
  const ended = new Promise((resolve) => worker.on("job:end", (e) => resolve(e.status)));
  await worker.start();
  const jid = await Hello.performAsync("cjs");
  const status = await ended;
  await worker.stop({ timeout: 1 });
  console.log("RAN " + jid + " " + status);
  process.exit(0);
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`,
  );
  const result = run(dir, "app.js");
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /hello cjs/);
  assert.match(result.stdout, /RAN [0-9a-f]{24} done/);
});

test("an app serves the dashboard's charts from the installed package: uPlot resolves from its node_modules", () => {
  const dir = app("web-app", { type: "module" });
  writeFileSync(
    join(dir, "app.js"),
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
  const result = run(dir, "app.js");
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /ASSET \/assets\/uplot\.min\.js 200 text\/javascript; charset=utf-8 [1-9]\d{4,}/);
  assert.match(result.stdout, /ASSET \/assets\/uplot\.min\.css 200 text\/css; charset=utf-8 [1-9]\d+/);
  assert.match(result.stdout, /ASSET \/assets\/charts\.js 200 text\/javascript; charset=utf-8 [1-9]\d+/);
  assert.match(result.stdout, /PAGE loads uplot/);
});
