-- keyed-limit-6.lua: the gate of a class's `static limit` for one key (src/features/locks/enterprise-rate-limits/KeyedLimiter.ts),
-- atomically: a per-key concurrency cap (the lock core's layout: holder jid -> expiry) and a per-key
-- sliding-window rate (rate-window-1.lua's layout), checked before the job's perform. A job that does not
-- fit is parked on its key's LIST, not rescheduled: it is handed back to its queue once, already admitted,
-- when its key has room (Sidekiq Enterprise reschedules it over and over instead, #6010 #3943).
--
-- Fairness: a class's keys with parked jobs sit in one ZSET scored by when they may next admit a job. Resumers take
-- the keys due first; a key gives at most ARGV[12] jobs per turn and is then scored again (now, or when
-- its rate or a lease frees), behind the keys already due: round robin, so 1,000 tenants all progress.
--
-- The clock is Redis's (TIME).
--
-- KEYS[1]  tsq:lock:rate:k:<C>:<key>  HASH  jid -> lease expiry, epoch ms: running jobs, and jobs handed
--                                            back (admitted) on their way to a worker
-- KEYS[2]  tsq:rl:w:k:<C>:<key>       ZSET  admissions, "<jid>:<ms>" -> epoch ms
-- KEYS[3]  tsq:rl-parked:<C>:<key>    LIST  parked jobs (JSON, as fetched), oldest at the head
-- KEYS[4]  tsq:rl-ready:<C>           ZSET  the class's keys with parked jobs -> epoch ms each may admit again
-- KEYS[5]  tsq:rl-waiting             HASH  class -> jobs parked on its keys
-- KEYS[6]  queues                     SET   queue names (SADD when a job is handed back)
-- ARGV[1]  "enter" (a job is about to run), "leave" (it ended) or "resume" (a resumer's turn for the key)
-- ARGV[2]  jid ("" for resume)
-- ARGV[3]  lease ttl, ms (a SIGKILLed holder's lease lapses after it; refreshed while the job runs)
-- ARGV[4]  concurrency per key, 0 for none
-- ARGV[5]  rate: admissions per window, 0 for none
-- ARGV[6]  rate window, ms
-- ARGV[7]  the limit key (its member in KEYS[4])
-- ARGV[8]  class name (KEYS[5] field)
-- ARGV[9]  queue key prefix ("queue:")
-- ARGV[10] enter: the job as it is parked; else ""
-- ARGV[11] most jobs one key may have parked
-- ARGV[12] most jobs handed back per call
--
-- Returns { status, parked }: enter: 1 run, 0 parked, -1 refused (the key's parked list is full);
-- leave and resume: status = jobs handed back.
-- include: ../lib/prune-holders.lua
local t = redis.call("time")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local jid = ARGV[2]
local ttl = tonumber(ARGV[3])
local concurrency = tonumber(ARGV[4])
local rate = tonumber(ARGV[5])
local window = tonumber(ARGV[6])

-- Live leases, dropping lapsed ones: O(leases), at most the concurrency plus jobs on their way.
local function leases()
  local n = 0
  prune_holders(KEYS[1], now, function() n = n + 1 end)
  return n
end

-- ms until the key may admit one more job; 0: now. A full concurrency waits for a leave (which hands
-- over at once) or, for a dead holder, its lease.
local function wait_ms()
  -- HLEN is O(1) but counts lapsed leases: the O(leases) scan runs only when the key looks full.
  if concurrency > 0 and redis.call("hlen", KEYS[1]) >= concurrency and leases() >= concurrency then return ttl end
  if rate > 0 then
    redis.call("zremrangebyscore", KEYS[2], "-inf", now - window)
    if redis.call("zcard", KEYS[2]) >= rate then
      local oldest = redis.call("zrange", KEYS[2], 0, 0, "WITHSCORES")
      return math.max(1, tonumber(oldest[2]) + window - now)
    end
  end
  return 0
end

-- `lease`: hold a lease (a running job with a concurrency, or a job handed back: its pass).
local function admit(holder, lease)
  if lease then
    -- Every lease lasts ttl from its last write (refreshes use the same ttl), so this one is the latest.
    redis.call("hset", KEYS[1], holder, string.format("%d", now + ttl))
    redis.call("pexpire", KEYS[1], ttl)
  end
  if rate > 0 then
    redis.call("zadd", KEYS[2], now, holder .. ":" .. now)
    redis.call("pexpire", KEYS[2], window)
  end
end

local function resume()
  local handed = {}
  while #handed < tonumber(ARGV[12]) and wait_ms() == 0 do
    local job = redis.call("lpop", KEYS[3])
    if not job then break end
    redis.call("hincrby", KEYS[5], ARGV[8], -1)
    local ok, decoded = pcall(cjson.decode, job)
    if ok and type(decoded) == "table" and type(decoded.jid) == "string" and type(decoded.queue) == "string" then
      admit(decoded.jid, true)
      redis.call("sadd", KEYS[6], decoded.queue)
      handed[#handed + 1] = { ARGV[9] .. decoded.queue, job }
    end
    -- An entry that is not a job (written by something else) is dropped: it could never run.
  end
  -- RPUSH, oldest last: handed-back jobs are the next popped (BRPOP takes the right end), in order, so
  -- their lease cannot lapse behind a long queue.
  for i = #handed, 1, -1 do redis.call("rpush", handed[i][1], handed[i][2]) end
  if tonumber(redis.call("hget", KEYS[5], ARGV[8]) or "0") <= 0 then redis.call("hdel", KEYS[5], ARGV[8]) end
  if redis.call("llen", KEYS[3]) == 0 then
    redis.call("zrem", KEYS[4], ARGV[7])
  else
    redis.call("zadd", KEYS[4], now + wait_ms(), ARGV[7])
  end
  return #handed
end

if ARGV[1] == "resume" then return { resume(), redis.call("llen", KEYS[3]) } end

if ARGV[1] == "leave" then
  redis.call("hdel", KEYS[1], jid)
  if redis.call("llen", KEYS[3]) == 0 then return { 0, 0 } end
  return { resume(), redis.call("llen", KEYS[3]) }
end

-- enter. A job handed back holds its pass: it runs (with a concurrency the pass is its lease).
local until_ms = tonumber(redis.call("hget", KEYS[1], jid))
if until_ms ~= nil and until_ms > now then
  if concurrency > 0 then
    redis.call("hset", KEYS[1], jid, string.format("%d", now + ttl))
  else
    redis.call("hdel", KEYS[1], jid)
  end
  return { 1, 0 }
end
-- FIFO per key: a newcomer runs only when none of its key's jobs is waiting.
local parked = redis.call("llen", KEYS[3])
if parked == 0 then
  local wait = wait_ms()
  if wait == 0 then
    admit(jid, concurrency > 0)
    return { 1, 0 }
  end
  redis.call("zadd", KEYS[4], "NX", now + wait, ARGV[7])
elseif parked >= tonumber(ARGV[11]) then
  return { -1, parked }
else
  redis.call("zadd", KEYS[4], "NX", now, ARGV[7])
end
redis.call("rpush", KEYS[3], ARGV[10])
redis.call("hincrby", KEYS[5], ARGV[8], 1)
return { 0, parked + 1 }
