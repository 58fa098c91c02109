-- rate-leaky-1.lua: pour `cost` into a leaky bucket (src/ratelimit), atomically. Sidekiq Enterprise's
-- leaky(name, size, period) and points(name, n, period) are both this: a bucket of `capacity` that
-- drains continuously at capacity per `period` ms. A call fits if its cost fits in what is left, so
-- bursts up to `capacity` pass and the long-run rate is capacity / period. leaky pours 1 per call,
-- points pours the call's estimated points.
--
-- The clock is Redis's (TIME), so every process on the Redis drains the bucket alike.
--
-- KEYS[1]  tsq:rl:l:<name>   HASH  level = contents after the last drain (a float), at = when (epoch
--                                  ms); PEXPIRE when it would be empty (+1 s)
-- ARGV[1]  capacity
-- ARGV[2]  period, ms: the time to drain a full bucket
-- ARGV[3]  cost
--
-- Returns { 1, now } taken (now: epoch ms) or { 0, ms until `cost` fits } over the limit.
local t = redis.call("time")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local stored = redis.call("hmget", KEYS[1], "level", "at")
local level = tonumber(stored[1]) or 0
local at = tonumber(stored[2]) or now
level = math.max(0, level - (now - at) * capacity / period)
if level + cost > capacity then
  return { 0, math.max(1, math.ceil((level + cost - capacity) * period / capacity)) }
end
level = level + cost
redis.call("hset", KEYS[1], "level", tostring(level), "at", string.format("%d", now))
redis.call("pexpire", KEYS[1], math.ceil(level * period / capacity) + 1000)
return { 1, now }
