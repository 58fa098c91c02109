-- reliable-fetch.lua: move up to ARGV[1] jobs of the first non-empty queue, in the given order, to this
-- process's private in-progress list, atomically (Sidekiq Pro super_fetch layout). Variable key count.
--
-- KEYS[2i-1]  queue:<q>                     a public queue, in fetch order
-- KEYS[2i]    queue:sq|<identity>|<q>       the private in-progress list for that queue
-- ARGV[1]     most jobs to move (the number of free slots)
--
-- Returns: { i, job1, job2, ... } for the first queue that had a job (i = 1-based pair index; jobs
-- oldest first), or nil when all are empty. LMOVE RIGHT LEFT: the public queue's oldest job, pushed
-- onto the private list's head.
local max = tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  local job = redis.call("lmove", KEYS[i], KEYS[i + 1], "RIGHT", "LEFT")
  if job then
    local result = { (i + 1) / 2, job }
    while #result <= max do
      job = redis.call("lmove", KEYS[i], KEYS[i + 1], "RIGHT", "LEFT")
      if not job then break end
      table.insert(result, job)
    end
    return result
  end
end
return nil
