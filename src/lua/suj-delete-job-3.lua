-- suj-delete-job-3.lua: the on_conflict "replace" search of sidekiq-unique-jobs (delete_job_by_digest):
-- remove the first job naming a lock digest from a queue, then `schedule`, then `retry`.
--
-- KEYS[1]  queue:<name>   LIST   searched 50 entries at a time
-- KEYS[2]  schedule       ZSET   searched 50 entries at a time
-- KEYS[3]  retry          ZSET   idem
-- ARGV[1]  the payload text to find: `"lock_digest":"<digest>"` (exact, so `…:RUN` is not matched)
--
-- Returns: the removed job's JSON, or false when no job names the digest.
local needle = ARGV[1]
local total = redis.call("llen", KEYS[1])
for index = 0, total - 1, 50 do
  for _, job in ipairs(redis.call("lrange", KEYS[1], index, index + 49)) do
    if string.find(job, needle, 1, true) then
      redis.call("lrem", KEYS[1], 1, job)
      return job
    end
  end
end
for _, set in ipairs({ KEYS[2], KEYS[3] }) do
  local size = redis.call("zcard", set)
  for index = 0, size - 1, 50 do
    for _, job in ipairs(redis.call("zrange", set, index, index + 49)) do
      if string.find(job, needle, 1, true) then
        redis.call("zrem", set, job)
        return job
      end
    end
  end
end
return false
