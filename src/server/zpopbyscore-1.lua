-- zpopbyscore-1.lua: remove and return the first member of a sorted set whose score is <= now.
-- Mirrors Sidekiq's Scheduled::Enq script; one job per call so a huge backlog never blocks Redis.
--
-- KEYS[1]  the sorted set (`schedule` or `retry`)
-- ARGV[1]  now, epoch seconds as a float string
--
-- Returns: the member (job JSON), or nil when nothing is due.
local jobs = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, 1)
if jobs[1] then
  redis.call("zrem", KEYS[1], jobs[1])
  return jobs[1]
end
return nil
