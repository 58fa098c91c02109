-- reliable-fetch.lua: move up to ARGV[1] jobs of the first non-empty queue, in the given order, to this
-- process's private in-progress list, atomically (Sidekiq Pro super_fetch layout). Variable key count.
--
-- KEYS[2i-1]  queue:<q>                     a public queue, in fetch order
-- KEYS[2i]    queue:sq|<identity>|<q>       the private in-progress list for that queue
-- ARGV[1]     most jobs to move (the number of free slots)
--
-- Returns: { i, job1, job2, ... } for the first queue that had a job (i = 1-based pair index; jobs
-- oldest first), or nil when all are empty.
--
-- The move is the same as one LMOVE queue -> private RIGHT LEFT per job (the public queue's oldest job
-- onto the private list's head), in three commands whatever the count: LRANGE the oldest ARGV[1], LTRIM
-- them off, LPUSH them oldest first. 50 LMOVEs cost Redis several times more (each redis.call from
-- Lua costs about 3 µs, the command's own work aside).
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
