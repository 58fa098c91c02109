/**
 * Runs a Ruby script against a test's private Redis and returns the JSON of its last expression: the
 * one way the Sidekiq tests (Debian's 6.4 through test/admin/api/rubyApi.ts, 7.3 and 8.0 through
 * test/helpers/sidekiqRuby.ts) read what Ruby sees. Values for the script go through `env`
 * (ENV["..."]) rather than quoted into Ruby source.
 */
import { execFile } from "node:child_process";

const JSON_MARK = "@@JSON ";

export interface RubyScript {
  /** `ruby` flags before `-e` (load paths, `-r` libraries). */
  flags: string[];
  /** Lines run before `code` (requires, settings). */
  preamble: string[];
  redisUrl: string;
  code: string;
  env?: Record<string, string>;
  /** Names the Ruby in an error ("Sidekiq 7.3.10"). */
  label?: string;
}

export async function rubyScriptJson<T>({ flags, preamble, redisUrl, code, env = {}, label }: RubyScript): Promise<T> {
  if (!redisUrl) throw new Error("the private Redis is not up yet; refusing to run Ruby against a default Redis");
  const script = [
    'require "json"',
    ...preamble,
    "Sidekiq.logger.level = Logger::WARN",
    `__result = begin\n${code}\nend`,
    `$stdout.puts(${JSON.stringify(JSON_MARK)} + JSON.generate(__result))`,
  ].join("\n");
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      "ruby",
      [...flags, "-e", script],
      { env: { ...process.env, REDIS_URL: redisUrl, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, out, err) =>
        error
          ? reject(new Error(`ruby${label ? ` (${label})` : ""} failed: ${error.message}\n${err}\nscript:\n${code}`))
          : resolve({ stdout: out, stderr: err }),
    );
  });
  const line = stdout.split("\n").find((l) => l.startsWith(JSON_MARK));
  if (line === undefined) throw new Error(`ruby printed no result; stdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice(JSON_MARK.length)) as T;
}
