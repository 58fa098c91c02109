-- recover-3.lua: return a dead process's in-progress jobs to their queue, counting recoveries per jid
-- so a job that keeps killing its process can be set aside as a poison pill.
--
-- KEYS[1]  queue:sq|<identity>|<q>   the dead process's private list
-- KEYS[2]  queue:<q>                 the public queue
-- KEYS[3]  schedule                  where repeat suspects wait
-- ARGV[1]  prefix of the per-jid recovery counters (the jid is appended; the key is built here
--          because the jids are only known inside the list)
-- ARGV[2]  counter lifetime, seconds (the poison-pill window)
-- ARGV[3]  recoveries allowed: a job found orphaned once more than this is a poison pill
-- ARGV[4]  now, epoch seconds (float)
-- ARGV[5]  spread, seconds: a repeat suspect is scheduled at now + rand * spread
-- ARGV[6]  random seed for that spread
--
-- First recovery: the job goes back to the FRONT of its queue (RPUSH: popped next), oldest fetch first.
-- Later recoveries: the job goes to `schedule` at a random time within the spread. Every job running in
-- a process that died is counted, so the innocent ones fetched together with a poison pill would be
-- fetched with it again and again if they all went back to the front together; scattering them in
-- time means only the job that really kills its process reaches the limit.
--
-- Returns: { moved, poison1, poison2, ... }: how many jobs were requeued or scheduled, then the exact
-- text of each poison pill, which is LEFT in the private list so that it is never lost; the caller
-- moves it to the dead set and removes it from the list in one MULTI.
math.randomseed(tonumber(ARGV[6]))
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
    if count <= 1 then
      redis.call("rpush", KEYS[2], job)
    else
      local at = tonumber(ARGV[4]) + math.random() * tonumber(ARGV[5])
      redis.call("zadd", KEYS[3], string.format("%.6f", at), job)
    end
    moved = moved + 1
  end
end
result[1] = moved
return result
