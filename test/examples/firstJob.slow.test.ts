/**
 * docs/first-job.md followed outside this repository, with the packed tarball for `npm install tsq`:
 * the files are the guide's own code blocks, compiled with `tsc`; the worker runs as `tsq -r
 * ./dist/jobs.js` and as the guide's worker.ts (the code it runs under tsx), each runs the job
 * `enqueue.js` pushed and stops on Ctrl-C (SIGINT).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { ROOT, within } from "../helpers/tsqProcess.js";
import { PROCESSES } from "../../src/wire/keys.js";

const handle = useRedis();
const work = mkdtempSync(join(tmpdir(), "tsq-first-job-"));
const dir = join(work, "hello-tsq");
const env = { ...process.env, REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" };

/** The guide's code blocks that follow a line naming a file (`jobs.ts`, ...), by file name. */
function filesOfGuide(): Map<string, string> {
  const guide = readFileSync(join(ROOT, "docs/first-job.md"), "utf8");
  const files = new Map<string, string>();
  // A block may carry a marker comment for the docs' compile test (`<!-- file: jobs.ts -->`) after its name.
  for (const match of guide.matchAll(/^`([\w.-]+\.(?:ts|json))`[^\n]*\n+(?:<!--[^\n]*-->\n+)?```\w+\n([\s\S]*?)```/gm))
    files.set(match[1]!, match[2]!);
  return files;
}

function sh(command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd: dir, encoding: "utf8", env });
  assert.equal(result.status, 0, `${command} ${args.join(" ")} failed: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

before(() => {
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: ROOT,
    encoding: "utf8",
  });
  const tarball = join(work, (JSON.parse(packed) as { filename: string }[])[0]!.filename);
  mkdirSync(dir);
  sh("npm", ["init", "-y"]);
  sh("npm", ["pkg", "set", "type=module"]);
  sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball]);
  // `npm install --save-dev typescript @types/node` in the guide; here the project's copies.
  mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules/@types/node"), join(dir, "node_modules/@types/node"));
  const files = filesOfGuide();
  assert.deepEqual([...files.keys()].sort(), ["enqueue.ts", "jobs.ts", "tsconfig.json", "worker.ts"]);
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
  sh(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc")]);
});
after(() => rmSync(work, { recursive: true, force: true }));

/** Starts `args` in the app folder, enqueues with dist/enqueue.js, waits for the job's line, Ctrl-C. */
async function runsTheJob(args: string[]): Promise<void> {
  const worker = spawn(process.execPath, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  worker.stdout.on("data", (d: Buffer) => (out += d.toString()));
  worker.stderr.on("data", (d: Buffer) => (out += d.toString()));
  // Exit status 0, or death by the SIGINT it re-raises after a graceful stop (an honest exit status).
  const exited = new Promise<string>((resolve) =>
    worker.once("exit", (code, signal) => resolve(String(code ?? signal))),
  );
  try {
    const enqueued = sh(process.execPath, ["dist/enqueue.js"]);
    const jid = /enqueued ([0-9a-f]{24})/.exec(enqueued)?.[1];
    assert.ok(jid, `enqueue.js printed no jid: ${enqueued}`);
    const deadline = Date.now() + 60_000;
    while (!out.includes(`hello world (job ${jid})`)) {
      assert.ok(Date.now() < deadline, `the worker did not run job ${jid}: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    worker.kill("SIGINT");
    const end = await within(exited, 60_000, "still running");
    assert.ok(["0", "SIGINT", "130"].includes(end), `the worker did not stop on SIGINT (${end}): ${out}`);
  } finally {
    worker.kill("SIGKILL");
  }
}

test("compiled: `tsq -r ./dist/jobs.js` runs the job that `node dist/enqueue.js` pushed", async () => {
  await runsTheJob([join(dir, "node_modules/.bin/tsq"), "-r", "./dist/jobs.js"]);
  assert.equal(await handle.redis.scard(PROCESSES), 0);
});

test("the guide's worker.ts (what tsx runs) starts a worker from code, runs the job and stops on Ctrl-C", async () => {
  await runsTheJob(["dist/worker.js"]);
  assert.equal(await handle.redis.scard(PROCESSES), 0);
});
