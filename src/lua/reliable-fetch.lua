-- reliable-fetch.lua: move the next job of the first non-empty queue, in the given order, to this
-- process's private in-progress list, atomically (Sidekiq Pro super_fetch layout). Variable key count.
--
-- KEYS[2i-1]  queue:<q>                     a public queue, in fetch order
-- KEYS[2i]    queue:sq|<identity>|<q>       the private in-progress list for that queue
--
-- Returns: { i, job } for the first queue that had a job (i = 1-based pair index), or nil when all
-- are empty. LMOVE RIGHT LEFT: the public queue's oldest job, pushed onto the private list's head.
for i = 1, #KEYS, 2 do
  local job = redis.call("lmove", KEYS[i], KEYS[i + 1], "RIGHT", "LEFT")
  if job then
    return { (i + 1) / 2, job }
  end
end
return nil
