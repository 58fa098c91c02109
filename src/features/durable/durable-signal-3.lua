-- durable-signal-3.lua: signal(event, data): keeps the data for jobs that wait later, hands it to every
-- job parked on the event and makes those jobs due now (score 0 in `schedule`: the poller moves them to
-- their queues, setting enqueued_at as for any scheduled job). Atomic with durable-park-4.lua.
--
-- KEYS[1]  the event's last signal (tsq:durable:signal:<event>)
-- KEYS[2]  the event's parked jobs (tsq:durable:waiters:<event>): jid -> payload
-- KEYS[3]  schedule
-- ARGV[1]  the data, JSON text
-- ARGV[2]  how long the signal is kept for later waits, seconds
-- ARGV[3]  the journal key prefix ("tsq:durable:"), to which a jid is appended
-- ARGV[4]  the event name
--
-- Returns: how many parked jobs were woken.
redis.call("set", KEYS[1], ARGV[1], "EX", ARGV[2])
local parked = redis.call("hgetall", KEYS[2])
local woken = 0
for i = 1, #parked, 2 do
  local journal = ARGV[3] .. parked[i]
  -- Only a job that still has a journal; one whose journal expired or was cancelled is not revived.
  if redis.call("exists", journal) == 1 and redis.call("hexists", journal, "cancelled") == 0 then
    redis.call("hset", journal, "e:" .. ARGV[4], ARGV[1])
    -- XX: a job the poller already moved (its timeout) is not added back; it finds e:<event> when it runs.
    if redis.call("zadd", KEYS[3], "XX", "CH", 0, parked[i + 1]) == 1 then woken = woken + 1 end
  end
end
redis.call("del", KEYS[2])
return woken
