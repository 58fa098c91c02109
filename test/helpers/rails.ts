/**
 * Rails interop tests use Debian's ruby-activejob (6.1) and ruby-sidekiq-cron (1.8.0) beside
 * ruby-sidekiq. Where one is missing its tests are skipped with a notice; under CI (CI=true) they fail.
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import type { TestContext } from "node:test";
import { requireRubySidekiq } from "./ruby.js";
import { rubyTestFile } from "./sidekiqProcess.js";

const probes = new Map<string, boolean>();

function rubyCanRequire(library: string): boolean {
  let ok = probes.get(library);
  if (ok === undefined) {
    ok = spawnSync("ruby", ["-e", `require ${JSON.stringify(library)}`], { stdio: "ignore" }).status === 0;
    probes.set(library, ok);
  }
  return ok;
}

/** Skips (or under CI fails) the test unless Ruby Sidekiq and `library` (from `aptPackage`) load. */
export function requireRubyLibrary(t: TestContext, library: string, aptPackage: string): boolean {
  if (!requireRubySidekiq(t)) return false;
  if (rubyCanRequire(library)) return true;
  const hint = `Ruby cannot load ${library} (apt-get install -y ${aptPackage})`;
  if (process.env.CI === "true") throw new Error(`${hint}; CI must run the Rails interop tests`);
  process.stderr.write(`NOTICE: skipping "${t.name}": ${hint}\n`);
  t.skip(hint);
  return false;
}

/** Runs `test/ruby/<script>` against the test's Redis and returns the JSON of its last stdout line. */
export async function runRubyScript<T>(script: string, args: string[], redisUrl: string): Promise<T> {
  const { stdout } = await promisify(execFile)("ruby", [rubyTestFile(script), ...args], {
    env: { ...process.env, REDIS_URL: redisUrl },
  });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "null") as T;
}

/** Runs a Ruby snippet (with `require` of the given libraries) and returns the JSON it prints last. */
export async function rubyEval<T>(code: string, redisUrl: string): Promise<T> {
  const { stdout } = await promisify(execFile)("ruby", ["-e", code], { env: { ...process.env, REDIS_URL: redisUrl } });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "null") as T;
}
