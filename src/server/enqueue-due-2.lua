-- enqueue-due-2.lua: move up to ARGV[2] due jobs from a sorted set (`schedule` or `retry`) to their
-- queues in one atomic step, setting `enqueued_at`, so a large backlog moves in a few calls and no job
-- is ever out of Redis between the set and its queue.
--
-- KEYS[1]  the sorted set
-- KEYS[2]  queues (the set of known queue names)
-- ARGV[1]  now, epoch seconds (float string): members scored at or below it are due
-- ARGV[2]  most jobs to move in this call
-- ARGV[3]  the new `enqueued_at` value, as JSON number text (float seconds or integer ms)
-- ARGV[4]  queue key prefix ("queue:")
--
-- Each job goes through stamp_enqueued_at (lib/enqueued-at.lua). A job it cannot edit safely (a nested
-- "enqueued_at", not an object, no queue) is removed from the set and returned for the caller to push
-- through the client, and so is a job that names a lock of the lock core: deduplication and unique jobs
-- check it again when it is due, as GitLab's and Enterprise's client middleware do under Ruby's poller
-- (the same jid counts as holding the lock).
--
-- Returns: { moved, returned1, returned2, ... }
-- include: lib/enqueued-at.lua
local due = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
local result = { 0 }
local moved = 0
for _, job in ipairs(due) do
  redis.call("zrem", KEYS[1], job)
  local text, queue = stamp_enqueued_at(job, ARGV[3])
  if text then
    redis.call("sadd", KEYS[2], queue)
    redis.call("lpush", ARGV[4] .. queue, text)
    moved = moved + 1
  else
    table.insert(result, job)
  end
end
result[1] = moved
return result
