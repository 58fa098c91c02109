-- rate-bucket-1.lua: take `cost` from a bucket limiter (src/ratelimit), atomically. Sidekiq Enterprise's
-- bucket: at most `limit` per interval (second, minute, hour, day), the count resetting at each boundary
-- of the interval since the epoch (not a sliding window: up to 2 x limit can pass around a boundary).
--
-- The clock is Redis's (TIME), so every process on the Redis agrees on the boundaries.
--
-- KEYS[1]  tsq:rl:b:<name>   HASH  n = the interval's number since the epoch, used = its count;
--                                  PEXPIREAT the interval's end (+1 s), so an idle limiter costs nothing
-- ARGV[1]  limit per interval
-- ARGV[2]  interval, ms
-- ARGV[3]  cost (1, or `used` for a call that counts as several)
--
-- Returns { 1, now } taken (now: epoch ms) or { 0, ms until the interval ends } over the limit.
local t = redis.call("time")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local n = math.floor(now / interval)
local stored = redis.call("hmget", KEYS[1], "n", "used")
local used = 0
if tonumber(stored[1]) == n then used = tonumber(stored[2]) or 0 end
local ends = (n + 1) * interval
if used + cost > limit then return { 0, ends - now } end
redis.call("hset", KEYS[1], "n", string.format("%d", n), "used", used + cost)
redis.call("pexpireat", KEYS[1], string.format("%d", ends + 1000))
return { 1, now }
