/**
 * Interop tests run the real Ruby Sidekiq (Debian's ruby-sidekiq, 6.4.1). Where it is missing they are
 * skipped with a visible notice; under CI (CI=true) a missing Ruby Sidekiq fails the run instead.
 */
import { spawnSync } from "node:child_process";
import type { TestContext } from "node:test";

let cached: boolean | undefined;

export function rubySidekiqAvailable(): boolean {
  if (cached === undefined) {
    const probe = spawnSync("ruby", ["-e", "require 'sidekiq'; print Sidekiq::VERSION"], { encoding: "utf8" });
    cached = probe.status === 0 && /^\d+\.\d+/.test(probe.stdout);
  }
  return cached;
}

/** Skips the test (or, under CI, fails it) when Ruby Sidekiq is not installed. Returns true to go on. */
export function requireRubySidekiq(t: TestContext): boolean {
  if (rubySidekiqAvailable()) return true;
  const hint = "Ruby Sidekiq is not installed (apt-get install -y ruby-sidekiq)";
  if (process.env.CI === "true") throw new Error(`${hint}; CI must run the interop tests`);
  process.stderr.write(`NOTICE: skipping "${t.name}": ${hint}\n`);
  t.skip(hint);
  return false;
}
