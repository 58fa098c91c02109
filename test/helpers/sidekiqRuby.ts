/**
 * Which Ruby Sidekiq an interop test runs, and how to run it. 6.4 is Debian's ruby-sidekiq (on Ruby's
 * own load path); 7.3 and 8.0 are the pure-Ruby trees in `../shared/ruby/` beside the project root
 * (TSQ_SIDEKIQ_RUBY_DIR overrides), loaded with `-I` paths as its README says; 8.0 also needs `-rset`
 * on Ruby 3.1. Where a tree is missing its tests are skipped with a notice; under CI (CI=true) they fail.
 *
 *   test("…", { skip: skipUnlessSidekiqRuby("7.3") }, async () => {
 *     const sidekiq = mustHaveSidekiqRuby("7.3");
 *     await startSidekiq({ redis, ruby: sidekiq });    // its server
 *     await rubyJson(sidekiq, redis.url, "Sidekiq::ProcessSet.new.size");
 *   });
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ROOT } from "./tsqProcess.js";
import { rubyScriptJson } from "./rubyScript.js";

export type SidekiqLine = "7.3" | "8.0";

export interface SidekiqRuby {
  line: SidekiqLine;
  /** The exact version of the tree, e.g. "7.3.10". */
  version: string;
  /** Ruby's flags that load it: `-I` paths (and `-rset` for 8.0). */
  flags: string[];
  /** The tree's `bin/sidekiq`, run as `ruby <flags> <bin> …`. */
  bin: string;
}

const TREES: Record<SidekiqLine, string> = { "7.3": "sidekiq-7.3.10", "8.0": "sidekiq-8.0.10" };
const LIBRARIES = ["redis-client-0.30.0", "connection_pool-2.5.5"];

/**
 * `TSQ_SIDEKIQ_RUBY_DIR`, else `../shared/ruby` beside the project root, else beside the local
 * repository this checkout was cloned from (a clean clone in a temporary directory, as CI makes), else
 * /work/shared/ruby.
 */
export function sidekiqRubyDir(): string {
  const override = process.env.TSQ_SIDEKIQ_RUBY_DIR;
  if (override) return resolve(override);
  const beside = join(dirname(ROOT), "shared", "ruby");
  if (existsSync(beside)) return beside;
  const origin = spawnSync("git", ["config", "--get", "remote.origin.url"], { cwd: ROOT, encoding: "utf8" });
  const url = origin.status === 0 ? origin.stdout.trim().replace(/^file:\/\//, "") : "";
  if (url.startsWith("/")) {
    const besideOrigin = join(dirname(url.replace(/\/\.git\/?$|\/$/, "")), "shared", "ruby");
    if (existsSync(besideOrigin)) return besideOrigin;
  }
  // The development machines' shared folder, for a clone made from elsewhere.
  const machineShared = "/work/shared/ruby";
  if (existsSync(machineShared)) return machineShared;
  return beside;
}

/** The tree of `line`, or undefined when it is not there. */
export function sidekiqRuby(line: SidekiqLine): SidekiqRuby | undefined {
  const dir = sidekiqRubyDir();
  const tree = join(dir, TREES[line]);
  const paths = [tree, ...LIBRARIES.map((name) => join(dir, name))].map((path) => join(path, "lib"));
  if (!paths.every((path) => existsSync(path))) return undefined;
  return {
    line,
    version: TREES[line].slice("sidekiq-".length),
    flags: [...(line === "8.0" ? ["-rset"] : []), ...paths.map((path) => `-I${path}`)],
    bin: join(tree, "bin", "sidekiq"),
  };
}

/**
 * False when the tree of `line` is there (or under CI, where its absence must fail the tests that need
 * it); else the reason to skip them, printed once as a notice.
 */
export function skipUnlessSidekiqRuby(line: SidekiqLine): string | false {
  if (sidekiqRuby(line) || process.env.CI === "true") return false;
  const hint = `Sidekiq ${line}'s Ruby tree is not in ${sidekiqRubyDir()} (TSQ_SIDEKIQ_RUBY_DIR names the directory holding ${TREES[line]})`;
  process.stderr.write(`NOTICE: skipping the Sidekiq ${line} interop tests: ${hint}\n`);
  return hint;
}

/** The tree of `line`, or an error saying where it was looked for (CI must run these tests). */
export function mustHaveSidekiqRuby(line: SidekiqLine): SidekiqRuby {
  const found = sidekiqRuby(line);
  if (found) return found;
  throw new Error(
    `Sidekiq ${line}'s Ruby tree is not in ${sidekiqRubyDir()}; CI must run the Sidekiq ${line} interop tests`,
  );
}

/**
 * Runs `code` with `sidekiq` and `sidekiq/api` of this tree loaded (plus `requires`), REDIS_URL at the
 * test's Redis, and resolves to the JSON of its last expression. Values for the script go through `env`
 * (ENV["..."]) rather than quoted into Ruby source.
 */
export async function rubyJson<T>(
  sidekiq: SidekiqRuby,
  redisUrl: string,
  code: string,
  { env = {}, requires = [] }: { env?: Record<string, string>; requires?: string[] } = {},
): Promise<T> {
  return rubyScriptJson<T>({
    flags: sidekiq.flags,
    preamble: [
      ...requires.map((library) => `require ${JSON.stringify(library)}`),
      'require "sidekiq"',
      'require "sidekiq/api"',
    ],
    redisUrl,
    code,
    env,
    label: `Sidekiq ${sidekiq.version}`,
  });
}
