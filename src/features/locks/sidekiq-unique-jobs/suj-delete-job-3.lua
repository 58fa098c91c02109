-- suj-delete-job-3.lua: the on_conflict "replace" search of sidekiq-unique-jobs (delete_job_by_digest):
-- remove the job holding a lock digest from a queue, then `schedule`, then `retry`. Unlike the gem, a
-- job naming the digest that does not hold the lock (a deferred duplicate) is never the one removed.
--
-- KEYS[1]  queue:<name>   LIST   searched 50 entries at a time
-- KEYS[2]  schedule       ZSET   searched 50 entries at a time
-- KEYS[3]  retry          ZSET   idem
-- ARGV[1]  payload text to find: `"lock_digest":"<digest>"` (with its closing quote, so `…:RUN` is not matched)
-- ARGV[2]  payload text to find too: `"jid":"<the holder's jid>"`
--
-- Returns: the removed job's JSON, or false when no job names the digest.
local function wanted(job)
  return string.find(job, ARGV[1], 1, true) and string.find(job, ARGV[2], 1, true)
end
local total = redis.call("llen", KEYS[1])
for index = 0, total - 1, 50 do
  for _, job in ipairs(redis.call("lrange", KEYS[1], index, index + 49)) do
    if wanted(job) then
      redis.call("lrem", KEYS[1], 1, job)
      return job
    end
  end
end
for _, set in ipairs({ KEYS[2], KEYS[3] }) do
  local size = redis.call("zcard", set)
  for index = 0, size - 1, 50 do
    for _, job in ipairs(redis.call("zrange", set, index, index + 49)) do
      if wanted(job) then
        redis.call("zrem", set, job)
        return job
      end
    end
  end
end
return false
