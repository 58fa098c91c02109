-- reliable-fetch.lua: acknowledge the jobs this process finished since its last fetch, then move up to
-- ARGV[1] jobs of the first non-empty queue, in the given order, to this process's private in-progress
-- list, atomically (Sidekiq Pro super_fetch layout). Variable key count.
--
-- KEYS[2i-1]  queue:<q>                     a public queue, in fetch order
-- KEYS[2i]    queue:sq|<identity>|<q>       the private in-progress list for that queue
-- ARGV[1]     most jobs to move (the number of free slots)
-- ARGV[1+i]   marks of finished jobs to remove from KEYS[2i] first (lib/ack-marks.lua), "" for none
--
-- Returns: { i, job1, job2, ... } for the first queue that had a job (i = 1-based pair index; jobs
-- oldest first), or nil when all are empty.
--
-- Acknowledging here saves the worker a Redis call per batch: the slots the finished jobs freed are what
-- this fetch fills, so their acks and the fetch would otherwise go out side by side (AckBatcher).
--
-- The move is the same as one LMOVE queue -> private RIGHT LEFT per job (the public queue's oldest job
-- onto the private list's head), in three commands whatever the count: LRANGE the oldest ARGV[1], LTRIM
-- them off, LPUSH them oldest first. 50 LMOVEs cost Redis several times more (each redis.call from
-- Lua costs about 3 µs, the command's own work aside).
-- include: lib/ack-marks.lua

for i = 2, #KEYS, 2 do
  local marks = ARGV[1 + i / 2]
  if marks and marks ~= "" then ack_marks(KEYS[i], marks, {}) end
end

local max = tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  local taken = redis.call("lrange", KEYS[i], -max, -1)
  local n = #taken
  if n > 0 then
    redis.call("ltrim", KEYS[i], 0, -(max + 1))
    -- LRANGE lists newest first (left to right); the oldest is taken[n].
    local result = { (i + 1) / 2 }
    for k = n, 1, -1 do
      result[#result + 1] = taken[k]
    end
    redis.call("lpush", KEYS[i + 1], unpack(result, 2))
    return result
  end
end
return nil
