-- reconcile-2.lua: after the fetcher's connection was lost, put back the jobs that sit in this process's
-- private list but that the process does not hold: a fetch whose reply was lost with the connection
-- moved them there (Redis did the move, the process never saw the jobs). Without this they would wait
-- in the private list until the process stops, since a live process's list is never recovered.
--
-- KEYS[1]  queue:sq|<identity>|<q>   this process's private list for queue q
-- KEYS[2]  queue:<q>                 the public queue
-- ARGV     the exact bytes of every job the process holds from this list (running, or finished with its
--          acknowledgement not yet written); a payload held twice appears twice
--
-- Returns: the number of jobs moved back to the front of the queue (RPUSH: fetched next).
local held = {}
for i = 1, #ARGV do
  held[ARGV[i]] = (held[ARGV[i]] or 0) + 1
end
local entries = redis.call("lrange", KEYS[1], 0, -1)
local moved = 0
-- LRANGE lists newest first. Each RPUSH puts a job where the next fetch takes from, so pushing newest
-- first leaves the oldest lost job to be fetched first again.
for i = 1, #entries do
  local job = entries[i]
  if (held[job] or 0) > 0 then
    held[job] = held[job] - 1
  else
    redis.call("lrem", KEYS[1], -1, job)
    redis.call("rpush", KEYS[2], job)
    moved = moved + 1
  end
end
return moved
