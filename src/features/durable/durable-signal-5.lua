-- durable-signal-5.lua: signal(event, data): keeps the data for jobs that wait later, hands it to every
-- job parked on the event and enqueues those jobs at once, as Sidekiq's enqueue does (SADD queues,
-- LPUSH queue:<q>, `enqueued_at` now), taking them out of `schedule` in the same step. Atomic with
-- durable-park-5.lua.
--
-- KEYS[1]  the event's last signal (tsq:durable:signal:<event>)
-- KEYS[2]  the event's parked jobs (tsq:durable:waiters:<event>): jid -> payload
-- KEYS[3]  schedule
-- KEYS[4]  queues (the set of known queue names)
-- KEYS[5]  the waiting index (tsq:durable:index:waiting): jid -> deadline, epoch seconds
-- ARGV[1]  the data, JSON text
-- ARGV[2]  how long the signal is kept for later waits, seconds
-- ARGV[3]  the journal key prefix ("tsq:durable:"), to which a jid is appended
-- ARGV[4]  the event name
-- ARGV[5]  the woken jobs' `enqueued_at`, JSON number text (float seconds or integer ms); "" keeps
--          every woken job in `schedule` (due now, score 0) for the poller to push through the client
-- ARGV[6]  queue key prefix ("queue:")
--
-- A job stamp_enqueued_at cannot edit safely (lib/enqueued-at.lua: odd text, or one naming a lock whose
-- middleware must see it) is made due now in `schedule` instead: the poller moves it within its interval.
--
-- Returns: how many parked jobs were woken.
-- include: ../../server/lib/enqueued-at.lua
redis.call("set", KEYS[1], ARGV[1], "EX", ARGV[2])
local parked = redis.call("hgetall", KEYS[2])
local woken = 0
for i = 1, #parked, 2 do
  local jid, job = parked[i], parked[i + 1]
  local journal = ARGV[3] .. jid
  -- Only a job that still has a journal; one whose journal expired or was cancelled is not revived.
  if redis.call("exists", journal) == 1 and redis.call("hexists", journal, "cancelled") == 0 then
    redis.call("hset", journal, "e:" .. ARGV[4], ARGV[1])
    redis.call("zrem", KEYS[5], jid)
    local text, queue = nil, nil
    if ARGV[5] ~= "" then text, queue = stamp_enqueued_at(job, ARGV[5]) end
    -- A job the poller already moved (its timeout) is in neither branch's reach: ZREM finds nothing and
    -- ZADD XX adds nothing, so it is never enqueued twice; it finds e:<event> when it runs.
    if text then
      if redis.call("zrem", KEYS[3], job) == 1 then
        redis.call("sadd", KEYS[4], queue)
        redis.call("lpush", ARGV[6] .. queue, text)
        woken = woken + 1
      end
    elseif redis.call("zadd", KEYS[3], "XX", "CH", 0, job) == 1 then
      woken = woken + 1
    end
  end
end
redis.call("del", KEYS[2])
return woken
