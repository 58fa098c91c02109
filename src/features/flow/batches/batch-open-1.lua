-- batch-open-1.lua: creates a batch (or reopens one) before a `jobs` block pushes into it. A token marks
-- the block open: no callback of the batch fires until the block's "seal" event removes it, so a job of
-- the block finishing before the last one is pushed cannot fire `complete` or `success` early.
--
-- KEYS[1]  tsq:batches        ZSET bid -> epoch second the batch's keys expire
-- ARGV[1]  prefix             "tsq:batch:" (the batch's keys are <prefix><bid>[:part], src/wire/keys/flow.ts)
-- ARGV[2]  bid
-- ARGV[3]  now                epoch seconds (float)
-- ARGV[4]  expiresIn          seconds an unfinished batch's keys live after its last open
-- ARGV[5]  mode               "create" (new Batch, or its deterministic bid again) | "reopen" (this.batch)
-- ARGV[6]  token              the block's token, "" for none (a job reopening its own batch holds it
--                              open by being pending itself)
-- ARGV[7]  parent             the parent batch's bid, "" for none
-- ARGV[8..] field, value      fields of a new batch (description, linger, cb:<event>, ...)
--
-- Returns: 1 created, 2 reopened. Errors: "NOBATCH" (gone: expired or never made), "FINISHED" (its
-- `success` fired), "NOPARENT" / "PARENTFINISHED" for the parent.
-- include: lib/batch-keys.lua
local prefix, bid, now, expiresIn = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local mode, token, parent = ARGV[5], ARGV[6], ARGV[7]
local h = batch_key(prefix, bid, "")

local function expireAt(b, at)
  local ms = math.floor(at * 1000)
  for _, part in ipairs(BATCH_PARTS) do
    redis.call("pexpireat", batch_key(prefix, b, part), ms)
  end
  redis.call("hset", batch_key(prefix, b, ""), "expires_at", tostring(at))
  redis.call("zadd", KEYS[1], tostring(at), b)
end

-- Unfinished batches live expiresIn past their latest open; never shortened here.
local function extend(b)
  local at = now + expiresIn
  local current = tonumber(redis.call("hget", batch_key(prefix, b, ""), "expires_at") or "0")
  if current > at then at = current end
  expireAt(b, at)
end

local exists = redis.call("exists", h) == 1
if not exists and mode == "reopen" then
  return redis.error_reply("NOBATCH batch " .. bid .. " does not exist (expired, or never opened)")
end
if exists and redis.call("hexists", h, "success_at") == 1 then
  return redis.error_reply("FINISHED batch " .. bid .. " already succeeded; open a new batch")
end
local result = 2
if not exists then
  result = 1
  if parent ~= "" then
    local ph = batch_key(prefix, parent, "")
    if redis.call("exists", ph) == 0 then
      return redis.error_reply("NOPARENT parent batch " .. parent .. " does not exist (expired?)")
    end
    if redis.call("hexists", ph, "success_at") == 1 then
      return redis.error_reply("PARENTFINISHED parent batch " .. parent .. " already succeeded")
    end
    -- The child is a member of its parent until the child's own callbacks release it.
    redis.call("sadd", batch_key(prefix, parent, ":pending"), "b:" .. bid)
    redis.call("sadd", batch_key(prefix, parent, ":unrun"), "b:" .. bid)
    redis.call("hincrby", ph, "children", 1)
    extend(parent)
    redis.call("hset", h, "parent", parent)
  end
  redis.call("hset", h, "created_at", ARGV[3], "total", 0, "children", 0)
  for i = 8, #ARGV, 2 do
    redis.call("hset", h, ARGV[i], ARGV[i + 1])
  end
end
if token ~= "" then
  redis.call("hset", batch_key(prefix, bid, ":open"), token, ARGV[3])
end
extend(bid)
-- Listing entries of expired batches go; the listing itself expires with its last batch.
redis.call("zremrangebyscore", KEYS[1], "-inf", ARGV[3])
local last = redis.call("zrange", KEYS[1], -1, -1, "withscores")
if last[2] then
  redis.call("pexpireat", KEYS[1], math.floor(tonumber(last[2]) * 1000) + 1000)
end
return result
