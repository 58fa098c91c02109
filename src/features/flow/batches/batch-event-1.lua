-- batch-event-1.lua: applies one event to a batch, fires the callbacks it makes due and carries the
-- result up to the parent batches, all in one atomic step. Every callback is pushed by the same call
-- that claims it (HSETNX <event>_at), so it fires exactly once whatever runs twice: a job re-run after a
-- SIGKILL (reliable fetch), a retry, a dead job retried by hand, two processes ending the last two jobs.
--
-- KEYS[1]  tsq:batches        ZSET bid -> expiry (epoch s); expires with its last batch
-- ARGV[1]  prefix             "tsq:batch:"
-- ARGV[2]  queuePrefix        "queue:"  (callbacks are pushed as Sidekiq's client does)
-- ARGV[3]  queues             "queues"
-- ARGV[4]  now                epoch seconds (float)
-- ARGV[5]  enqueuedAt         the callback jobs' `enqueued_at`, as JSON (float s, or integer ms for 8.x)
-- ARGV[6]  failCap            failure records kept per batch (`failinfo`)
-- ARGV[7]  op                 success | failure | death   a member (jid) ran
--                             seal                        a `jobs` block ended (member = its token)
--                             leave                       a job joined but was not pushed
-- ARGV[8]  bid
-- ARGV[9]  member             the jid (or token)
-- ARGV[10] info               failure JSON for failure/death, else ""
--
-- Members are jids and child batches (`b:<bid>`). Events, each at most once per batch:
--   complete  every member ran at least once (`unrun` empty)
--   success   every member succeeded (`pending` empty); the batch's keys then expire after `linger` s
--   death     the first member died; carried to every parent
--   settled   every member either succeeded or died: nothing is left to wait for (workflows)
--
-- Returns: the events fired, flat: { bid, event, bid, event, ... }.
-- include: lib/batch-keys.lua
local prefix, queuePrefix, queuesKey = ARGV[1], ARGV[2], ARGV[3]
local now, enqueuedAt, failCap = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local fired = {}
local work = { { ARGV[7], ARGV[8], ARGV[9], ARGV[10] } }

local function key(b, part)
  return batch_key(prefix, b, part)
end

local function expireAt(b, at)
  local ms = math.floor(at * 1000)
  for _, part in ipairs(BATCH_PARTS) do
    redis.call("pexpireat", key(b, part), ms)
  end
  redis.call("hset", key(b, ""), "expires_at", tostring(at))
  redis.call("zadd", KEYS[1], tostring(at), b)
  redis.call("zremrangebyscore", KEYS[1], "-inf", ARGV[4])
  local last = redis.call("zrange", KEYS[1], -1, -1, "withscores")
  if last[2] then
    redis.call("pexpireat", KEYS[1], math.floor(tonumber(last[2]) * 1000) + 1000)
  end
end

-- A key created by this call (the first failure's set) gets the batch's expiry too.
local function keepExpiry(b)
  local ms = math.floor(tonumber(redis.call("hget", key(b, ""), "expires_at") or "0") * 1000)
  if ms == 0 then
    return
  end
  for _, part in ipairs({ ":failed", ":dead", ":failinfo" }) do
    if redis.call("pttl", key(b, part)) == -1 then
      redis.call("pexpireat", key(b, part), ms)
    end
  end
end

local function recordFailure(b, member, info)
  redis.call("sadd", key(b, ":failed"), member)
  local failinfo = key(b, ":failinfo")
  if info ~= "" and (redis.call("hlen", failinfo) < failCap or redis.call("hexists", failinfo, member) == 1) then
    redis.call("hset", failinfo, member, info)
  end
end

local function fire(b, event)
  local h = key(b, "")
  if redis.call("hsetnx", h, event .. "_at", ARGV[4]) == 0 then
    return false
  end
  fired[#fired + 1] = b
  fired[#fired + 1] = event
  local callbacks = redis.call("hget", h, "cb:" .. event)
  if not callbacks then
    return true
  end
  local status = cjson.encode({
    bid = b,
    event = event,
    total = tonumber(redis.call("hget", h, "total") or "0"),
    children = tonumber(redis.call("hget", h, "children") or "0"),
    pending = redis.call("scard", key(b, ":pending")),
    failures = redis.call("scard", key(b, ":failed")),
    dead = redis.call("scard", key(b, ":dead")),
  })
  -- Each callback: [queue, head, rest]: the job JSON without args and enqueued_at, and the args after
  -- the status as a JSON array. The job is put together here, never edited by text search, so the
  -- user's options keep their own fields. (Batches stored before this form: [queue, job JSON with
  -- "$TSQ_STATUS$" and "$TSQ_ENQUEUED_AT$" placeholders], filled in as they were written.)
  for _, callback in ipairs(cjson.decode(callbacks)) do
    local queue, job = callback[1], callback[2]
    if callback[3] then
      local rest = callback[3]
      local args = rest == "[]" and ("[" .. status .. "]") or ("[" .. status .. "," .. string.sub(rest, 2))
      job = string.sub(job, 1, -2) .. ',"args":' .. args .. ',"enqueued_at":' .. enqueuedAt .. "}"
    else
      job = string.gsub(job, '"%$TSQ_STATUS%$"', function()
        return status
      end, 1)
      job = string.gsub(job, '"%$TSQ_ENQUEUED_AT%$"', function()
        return enqueuedAt
      end, 1)
    end
    redis.call("sadd", queuesKey, queue)
    redis.call("lpush", queuePrefix .. queue, job)
  end
  return true
end

local function check(b, parent)
  if redis.call("hlen", key(b, ":open")) > 0 then
    return
  end
  local unrun = redis.call("scard", key(b, ":unrun"))
  local pending = redis.call("scard", key(b, ":pending"))
  local dead = redis.call("scard", key(b, ":dead"))
  local child = "b:" .. b
  if unrun == 0 and fire(b, "complete") and parent then
    work[#work + 1] = { "childComplete", parent, child, "" }
  end
  if pending == 0 and fire(b, "success") then
    if parent then
      work[#work + 1] = { "success", parent, child, "" }
    end
    local linger = tonumber(redis.call("hget", key(b, ""), "linger") or "86400")
    expireAt(b, now + linger)
  end
  if unrun == 0 and pending == dead and fire(b, "settled") and parent and dead > 0 then
    work[#work + 1] = { "childDead", parent, child, "" }
  end
end

-- Applies one event; false when it changed nothing (a repeat), so nothing is re-checked.
local function apply(op, b, member, info)
  local h = key(b, "")
  if redis.call("exists", h) == 0 then
    return false -- expired or not a tsq batch (a Sidekiq Pro bid): nothing to do, nothing created
  end
  local pending = key(b, ":pending")
  if op == "success" then
    if redis.call("srem", pending, member) == 0 then
      return false
    end
    redis.call("srem", key(b, ":unrun"), member)
    -- Dead members are failed members too (recordFailure): most successes stop here.
    if redis.call("srem", key(b, ":failed"), member) == 1 then
      redis.call("srem", key(b, ":dead"), member)
      redis.call("hdel", key(b, ":failinfo"), member)
    end
  elseif op == "failure" or op == "death" or op == "childDead" then
    if redis.call("sismember", pending, member) == 0 then
      return false -- it already succeeded: a stale report
    end
    redis.call("srem", key(b, ":unrun"), member)
    if op ~= "failure" then
      redis.call("sadd", key(b, ":dead"), member)
    end
    recordFailure(b, member, info)
    keepExpiry(b)
    if op == "death" and fire(b, "death") then
      work[#work + 1] = { "childDeath", redis.call("hget", h, "parent") or "", "b:" .. b, "" }
    end
  elseif op == "childComplete" then
    if redis.call("srem", key(b, ":unrun"), member) == 0 then
      return false
    end
  elseif op == "childDeath" then
    if fire(b, "death") then
      work[#work + 1] = { "childDeath", redis.call("hget", h, "parent") or "", "b:" .. b, "" }
    end
    return false
  elseif op == "seal" then
    if redis.call("hdel", key(b, ":open"), member) == 0 then
      return false
    end
  elseif op == "leave" then
    if redis.call("srem", pending, member) == 0 then
      return false
    end
    redis.call("srem", key(b, ":unrun"), member)
    redis.call("hincrby", h, "total", -1)
  else
    error("unknown batch event " .. op)
  end
  return true
end

local i = 1
while i <= #work do
  local op, b, member, info = work[i][1], work[i][2], work[i][3], work[i][4]
  if b ~= "" and apply(op, b, member, info) then
    check(b, redis.call("hget", key(b, ""), "parent"))
  end
  i = i + 1
end
return fired
