-- recover-2.lua: return a dead process's in-progress jobs to the front of their public queue, counting
-- recoveries per jid so a job that keeps killing its process can be set aside as a poison pill.
--
-- KEYS[1]  queue:sq|<identity>|<q>   the dead process's private list
-- KEYS[2]  queue:<q>                 the public queue
-- ARGV[1]  prefix of the per-jid recovery counters (the jid is appended; the key is built here
--          because the jids are only known inside the list)
-- ARGV[2]  counter lifetime, seconds (the poison-pill window)
-- ARGV[3]  recoveries allowed: a job found orphaned once more than this is a poison pill
--
-- Returns: { moved, poison1, poison2, ... }: how many jobs were requeued, then the exact text of each
-- poison pill, which is LEFT in the private list so that it is never lost; the caller moves it to the
-- dead set and removes it from the list in one MULTI.
--
-- The private list holds the newest fetch at its head, so walking it head to tail and RPUSHing puts
-- the oldest fetch at the queue's tail, where it is popped next: recovered jobs run first, in order.
local jobs = redis.call("lrange", KEYS[1], 0, -1)
local moved = 0
local result = { 0 }
for _, job in ipairs(jobs) do
  local ok, decoded = pcall(cjson.decode, job)
  local jid = ok and type(decoded) == "table" and decoded["jid"] or nil
  local count = 0
  if type(jid) == "string" then
    local key = ARGV[1] .. jid
    count = redis.call("incr", key)
    if count == 1 then redis.call("expire", key, ARGV[2]) end
  end
  if count > tonumber(ARGV[3]) then
    table.insert(result, job)
  else
    redis.call("lrem", KEYS[1], 1, job)
    redis.call("rpush", KEYS[2], job)
    moved = moved + 1
  end
end
result[1] = moved
return result
