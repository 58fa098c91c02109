-- ack-jobs-1.lua: acknowledge finished jobs of reliable fetch in one call: remove each from the process's
-- private in-progress list, by its exact bytes.
--
-- KEYS[1]  queue:sq|<identity>|<q>   the private list the jobs were fetched into
-- ARGV     the finished jobs, exactly as fetched
--
-- Returns: how many were removed (less than #ARGV only if a job was already gone, e.g. recovered by
-- another process that took this one for dead).
--
-- A private list holds about as many jobs as the process has slots, and a call acks most of them; one
-- LREM per job costs a redis.call each (about 3 µs from Lua, besides the work). So unless the list is
-- much longer than the batch, the list is read once, the acked jobs are left out, and the rest is
-- written back in the same order: three calls whatever the batch. An acked job that occurs twice (two
-- identical payloads) removes one occurrence, the one nearest the tail, as LREM -1 does.
local list = redis.call("lrange", KEYS[1], 0, -1)
if #list > 8 * #ARGV then
  local removed = 0
  for i = 1, #ARGV do
    removed = removed + redis.call("lrem", KEYS[1], -1, ARGV[i])
  end
  return removed
end
local pending = {}
for i = 1, #ARGV do
  pending[ARGV[i]] = (pending[ARGV[i]] or 0) + 1
end
-- From the tail to the head, keeping what is not acked.
local keep = {}
local removed = 0
for i = #list, 1, -1 do
  local job = list[i]
  local n = pending[job]
  if n and n > 0 then
    pending[job] = n - 1
    removed = removed + 1
  else
    keep[#keep + 1] = job
  end
end
if removed == 0 then
  return 0
end
redis.call("del", KEYS[1])
-- LPUSH in tail-to-head order rebuilds the same order; in slices, under Lua's unpack limit.
for from = 1, #keep, 5000 do
  redis.call("lpush", KEYS[1], unpack(keep, from, math.min(from + 4999, #keep)))
end
return removed
