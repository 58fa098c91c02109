-- rate-window-1.lua: take `cost` from a sliding-window limiter (src/ratelimit), atomically. Sidekiq
-- Enterprise's window: at most `limit` admissions in any `window` ms, whenever it starts (no burst at a
-- boundary, unlike a bucket). Each admission is a ZSET member scored by its time; members older than
-- the window are dropped on every call, so the set holds at most `limit` members.
--
-- The clock is Redis's (TIME), so every process on the Redis agrees on what the last window holds.
--
-- KEYS[1]  tsq:rl:w:<name>   ZSET  "<id>:<i>" -> epoch ms of the admission; PEXPIRE window after the
--                                  last one, so an idle limiter costs nothing
-- ARGV[1]  limit per window
-- ARGV[2]  window, ms
-- ARGV[3]  id of this call (unique: a random hex), makes the members distinct
-- ARGV[4]  cost (members added)
--
-- Returns { 1, now } taken (now: epoch ms, the admission's time) or { 0, ms until the oldest admission
-- leaves the window } over the limit.
local t = redis.call("time")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
-- An admission at t counts while now - t < window.
redis.call("zremrangebyscore", KEYS[1], "-inf", now - window)
local count = redis.call("zcard", KEYS[1])
if count + cost > limit then
  -- The oldest admission that must leave before `cost` more fit.
  local oldest = redis.call("zrange", KEYS[1], count + cost - limit - 1, count + cost - limit - 1, "WITHSCORES")
  local leaves = tonumber(oldest[2] or now) + window
  return { 0, math.max(1, leaves - now) }
end
for i = 1, cost do
  redis.call("zadd", KEYS[1], now, ARGV[3] .. ":" .. i)
end
redis.call("pexpire", KEYS[1], window)
return { 1, now }
