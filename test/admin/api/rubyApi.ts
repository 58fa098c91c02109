/**
 * Runs Ruby against a test's private Redis with `sidekiq/api` loaded (Debian's Sidekiq 6.4.1), for
 * the admin API tests: the last expression's value comes back as parsed JSON.
 *
 *   const size = await ruby<number>(redis, "Sidekiq::RetrySet.new.size");
 *   await ruby(redis, 'Sidekiq::RetrySet.new.find_job(ENV["JID"]).retry; true', { JID: jid });
 *
 * Values for the script go through `env` (read with ENV["..."]), which avoids quoting into Ruby source.
 */
import { execFile } from "node:child_process";
import type { RedisHandle } from "../../helpers/redis.js";

const JSON_MARK = "@@JSON ";

export async function ruby<T>(handle: RedisHandle, code: string, env: Record<string, string> = {}): Promise<T> {
  if (!handle.url) throw new Error("the private Redis is not up yet; refusing to run Ruby against a default Redis");
  const script = [
    'require "json"',
    "Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)",
    "Sidekiq.logger.level = Logger::WARN",
    `__result = begin\n${code}\nend`,
    `$stdout.puts(${JSON.stringify(JSON_MARK)} + JSON.generate(__result))`,
  ].join("\n");
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      "ruby",
      ["-r", "sidekiq/api", "-e", script],
      { env: { ...process.env, REDIS_URL: handle.url, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, out, err) =>
        error
          ? reject(new Error(`ruby failed: ${error.message}\n${err}\nscript:\n${code}`))
          : resolve({ stdout: out, stderr: err }),
    );
  });
  const line = stdout.split("\n").find((l) => l.startsWith(JSON_MARK));
  if (line === undefined) throw new Error(`ruby printed no result; stdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice(JSON_MARK.length)) as T;
}
