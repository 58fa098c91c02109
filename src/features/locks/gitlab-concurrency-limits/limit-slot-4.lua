-- limit-slot-4.lua: take or give back a concurrency-limit slot of a job class, or admit a pushed job of
-- the class, atomically (src/limits).
--
-- The slots are a lock of the lock core (src/features/locks/Lock.ts): a HASH of holder jid -> expiry (epoch ms),
-- at most `limit` live holders. Jobs that find no slot wait in the class's parked LIST, oldest at the
-- head. A slot that frees is handed, in the same step, to the oldest parked job: it becomes a holder and
-- its payload is pushed to its queue like a new job (LPUSH: resumed jobs keep their order among
-- themselves; RPUSH to the front would turn back-to-back resumes into LIFO). The limit is never exceeded
-- and no resumer is needed (GitLab's cron resumer overshoots, gitlab#579350).
--
-- KEYS[1]  tsq:lock:limit:<Class>     slots: holder jid -> expiry, epoch ms
-- KEYS[2]  tsq:limit-parked:<Class>   parked jobs (JSON), RPUSH to park, LPOP the oldest
-- KEYS[3]  tsq:limits                 class -> limit, for tsqctl and metrics
-- KEYS[4]  queues                     the set of queue names (SADD when a parked job is resumed)
-- ARGV[1]  "enter" (a job is about to run), "leave" (a job finished; with ARGV[2] == "" a sweep that
--          only drops expired slots and hands them on) or "admit" (a client pushes a job: it joins the
--          parked list's tail and free slots go to the oldest parked jobs, so slots are granted in the
--          order pushes reach Redis)
-- ARGV[2]  holder jid, or "" (admit: the pushed job's jid)
-- ARGV[3]  slot ttl, ms: a holder's expiry is now + ttl (refreshed while it runs)
-- ARGV[4]  limit: > 0 slots; 0 no limit (parked jobs are all resumed, 100 per call); < 0 paused
-- ARGV[5]  now, epoch ms
-- ARGV[6]  class name (the field in KEYS[3])
-- ARGV[7]  queue key prefix ("queue:")
-- ARGV[8]  enter, admit: the job as it is parked (already marked concurrency_limit_resume); leave: ""
-- ARGV[9]  most jobs the parked list may hold
-- ARGV[10] enter: "1" if the job was resumed before (it parks at the head, keeping its turn), else "0"
--
-- Returns { status, running, parked }:
--   enter: status 1 run (the jid holds a slot), 0 parked, -1 refused (the parked list is full)
--   admit: status 1 granted (the job holds a slot and is in its queue), 0 parked, -1 refused (not written)
--   leave: status = how many parked jobs were resumed
-- include: ../lib/prune-holders.lua
local now = tonumber(ARGV[5])
local ttl = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local jid = ARGV[2]
redis.call("hset", KEYS[3], ARGV[6], ARGV[4])

-- Live holders other than `jid`. HLEN is O(1) but counts expired holds (of a process that died); the
-- O(holders) scan that drops them runs only when they could matter: when the slots look full, and in
-- the periodic sweep (ARGV[2] == ""). So a class below its limit costs O(1) per job whatever the limit.
-- An admit never scans: with the slots full every push would (~0.2 ms for a limit of 1,000, measured),
-- and counting an expired hold as live can only grant less; the workers' sweeps hand it on.
if ARGV[1] == "leave" and jid ~= "" then redis.call("hdel", KEYS[1], jid) end
local mine = false
if ARGV[1] == "enter" then
  local until_ms = tonumber(redis.call("hget", KEYS[1], jid))
  mine = until_ms ~= nil and until_ms > now
end
local running = redis.call("hlen", KEYS[1]) - (mine and 1 or 0)
if jid == "" or (ARGV[1] ~= "admit" and limit > 0 and running >= limit) then
  running = 0
  prune_holders(KEYS[1], now, function(holder)
    if holder ~= jid then running = running + 1 end
  end)
end

local function hold(holder)
  redis.call("hset", KEYS[1], holder, string.format("%d", now + ttl))
  if redis.call("pttl", KEYS[1]) < ttl then redis.call("pexpire", KEYS[1], ttl) end
  running = running + 1
end

-- Gives free slots to the oldest parked jobs (all of them, 100 per call, when there is no limit).
local function resume()
  local resumed = 0
  while (limit > 0 and running < limit) or (limit == 0 and resumed < 100) do
    local job = redis.call("lpop", KEYS[2])
    if not job then break end
    local ok, decoded = pcall(cjson.decode, job)
    if ok and type(decoded) == "table" and type(decoded.jid) == "string" and type(decoded.queue) == "string" then
      if limit > 0 then hold(decoded.jid) end
      redis.call("sadd", KEYS[4], decoded.queue)
      redis.call("lpush", ARGV[7] .. decoded.queue, job)
      resumed = resumed + 1
    end
    -- An entry that is not a job (written by something else) is dropped: it could never run.
  end
  return resumed
end

if ARGV[1] == "leave" then
  local resumed = 0
  if limit >= 0 then resumed = resume() end
  return { resumed, running, redis.call("llen", KEYS[2]) }
end

if ARGV[1] == "admit" then
  -- Free slots (the limit was raised) go to the jobs already waiting before the bound is checked. The
  -- client admits only for a limit ~= 0; a paused class (< 0) just parks.
  if limit > 0 then resume() end
  local waiting = redis.call("llen", KEYS[2])
  if waiting >= tonumber(ARGV[9]) then return { -1, running, waiting } end
  redis.call("rpush", KEYS[2], ARGV[8])
  if limit > 0 then resume() end
  -- The job joined the tail and resume() pops from the head: it was granted iff the list is empty now.
  local parked = redis.call("llen", KEYS[2])
  return { parked == 0 and 1 or 0, running, parked }
end

local parked = redis.call("llen", KEYS[2])
if limit > 0 then
  if mine and running < limit then
    hold(jid)
    return { 1, running, parked }
  end
  -- FIFO: a newcomer takes a free slot only when nobody is waiting for it.
  if not mine and running < limit and parked == 0 then
    hold(jid)
    return { 1, running, parked }
  end
end
if mine then redis.call("hdel", KEYS[1], jid) end
if parked >= tonumber(ARGV[9]) then return { -1, running, parked } end
if ARGV[10] == "1" then
  redis.call("lpush", KEYS[2], ARGV[8])
else
  redis.call("rpush", KEYS[2], ARGV[8])
end
-- Slots freed by expiry (a dead process) are handed on here, to the oldest parked (maybe this job).
if limit > 0 then resume() end
return { 0, running, redis.call("llen", KEYS[2]) }
