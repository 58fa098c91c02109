/**
 * Runs Ruby against a test's private Redis with `sidekiq/api` loaded (Debian's Sidekiq 6.4.1), for
 * the admin API tests: the last expression's value comes back as parsed JSON.
 *
 *   const size = await ruby<number>(redis, "Sidekiq::RetrySet.new.size");
 *   await ruby(redis, 'Sidekiq::RetrySet.new.find_job(ENV["JID"]).retry; true', { JID: jid });
 *
 * Values for the script go through `env` (read with ENV["..."]), which avoids quoting into Ruby source.
 */
import type { RedisHandle } from "../../helpers/redis.js";
import { rubyScriptJson } from "../../helpers/rubyScript.js";

export async function ruby<T>(handle: RedisHandle, code: string, env: Record<string, string> = {}): Promise<T> {
  return rubyScriptJson<T>({
    flags: ["-r", "sidekiq/api"],
    preamble: ["Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)"],
    redisUrl: handle.url,
    code,
    env,
  });
}
