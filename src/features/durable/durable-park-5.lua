-- durable-park-5.lua: waitFor() parks a job on an event, unless the event's signal is already there:
-- atomic with durable-signal-5.lua, so a signal sent before, during or after the park is never lost.
--
-- KEYS[1]  the job's journal (tsq:durable:<jid>)
-- KEYS[2]  the event's last signal (tsq:durable:signal:<event>)
-- KEYS[3]  the event's parked jobs (tsq:durable:waiters:<event>): jid -> payload
-- KEYS[4]  schedule
-- KEYS[5]  the waiting index (tsq:durable:index:waiting): jid -> deadline, epoch seconds; what the
--          tsq_durable_waiting gauge counts (entries past their deadline are pruned here)
-- ARGV[1]  jid
-- ARGV[2]  the wait's step name
-- ARGV[3]  the wait's position in the run
-- ARGV[4]  the job's payload (JSON text, as it goes into `schedule`)
-- ARGV[5]  the deadline, epoch seconds, if this is the first park of this wait (HSETNX keeps the first)
-- ARGV[6]  now, epoch seconds
-- ARGV[7]  the journal's TTL, seconds: a parked job's journal lives until the deadline plus this, so
--          it is there whenever the job comes back (signal or timeout)
-- ARGV[8]  the event name
--
-- Returns: { "cancelled" } the journal is marked cancelled (cancel(jid) came first): nothing written;
--          { "signal", <data JSON> } the step is recorded with the data: the job goes on;
--          { "timeout" } the deadline passed: recorded as timed out;
--          { "parked", <deadline> } the job waits in `schedule` until the deadline or a signal.
if redis.call("hexists", KEYS[1], "cancelled") == 1 then return { "cancelled" } end
local field = "s:" .. ARGV[2]
local data = redis.call("hget", KEYS[1], "e:" .. ARGV[8])
if not data then data = redis.call("get", KEYS[2]) end
if data then
  redis.call("hset", KEYS[1], field, ARGV[3] .. "|v|" .. data)
  redis.call("hdel", KEYS[1], "w", "ws", "d:" .. ARGV[2])
  redis.call("hdel", KEYS[3], ARGV[1])
  redis.call("zrem", KEYS[5], ARGV[1])
  redis.call("expire", KEYS[1], ARGV[7])
  return { "signal", data }
end
redis.call("hsetnx", KEYS[1], "d:" .. ARGV[2], ARGV[5])
local deadline = tonumber(redis.call("hget", KEYS[1], "d:" .. ARGV[2])) or tonumber(ARGV[5])
local now = tonumber(ARGV[6])
if now >= deadline then
  redis.call("hset", KEYS[1], field, ARGV[3] .. "|t|")
  redis.call("hdel", KEYS[1], "w", "ws", "d:" .. ARGV[2])
  redis.call("hdel", KEYS[3], ARGV[1])
  redis.call("zrem", KEYS[5], ARGV[1])
  redis.call("expire", KEYS[1], ARGV[7])
  return { "timeout" }
end
local keep = math.ceil(deadline - now) + tonumber(ARGV[7])
redis.call("hset", KEYS[3], ARGV[1], ARGV[4])
if redis.call("ttl", KEYS[3]) < keep then redis.call("expire", KEYS[3], keep) end
if redis.call("hsetnx", KEYS[1], "w", ARGV[8]) == 1 then redis.call("hset", KEYS[1], "ws", ARGV[6]) end
redis.call("expire", KEYS[1], keep)
redis.call("zadd", KEYS[4], deadline, ARGV[4])
redis.call("zremrangebyscore", KEYS[5], "-inf", "(" .. ARGV[6])
redis.call("zadd", KEYS[5], deadline, ARGV[1])
return { "parked", tostring(deadline) }
