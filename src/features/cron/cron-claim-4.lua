-- cron-claim-4.lua: claim one tick of a periodic schedule and push its job in the same atomic step, so
-- each tick is enqueued once even across a leader change, two briefly overlapping leaders, or a leader
-- killed mid-tick (a claim and a push in two steps lost the tick when the kill fell between them).
--
-- Two guards: the per-tick key (SET NX EX), and the schedule's `cursor`, the latest tick already
-- dealt with. The cursor catches a stale leader replaying ticks whose claim keys have expired; it
-- only moves forward and moves in the same atomic step as the claim.
--
-- KEYS[1]  the schedule hash (`tsq:cron:<name>`)
-- KEYS[2]  the tick's claim key (`tsq:cron-tick:<name>:<tick>`)
-- KEYS[3]  queues                  (the job's push, as Sidekiq's client: SADD queues <q>)
-- KEYS[4]  queue:<q>               (LPUSH queue:<q> <job>)
-- ARGV[1]  the tick, integer epoch seconds
-- ARGV[2]  this process's identity (the claim's value, for debugging)
-- ARGV[3]  claim TTL, seconds
-- ARGV[4]  the queue's name
-- ARGV[5]  the job, serialized; "" claims without pushing
--
-- Returns:  1 claimed and pushed (or claimed, with no job given)
--           0 already claimed, or not after the cursor: nothing done
--           2 claimed, but the schedule is disabled: the tick is skipped, nothing pushed
--          -1 the schedule is not stored (a newer leader removed it): nothing done
if redis.call("exists", KEYS[1]) == 0 then
  return -1
end
local tick = tonumber(ARGV[1])
local cursor = tonumber(redis.call("hget", KEYS[1], "cursor") or "0") or 0
if tick <= cursor then
  return 0
end
if not redis.call("set", KEYS[2], ARGV[2], "NX", "EX", ARGV[3]) then
  return 0
end
redis.call("hset", KEYS[1], "cursor", ARGV[1])
if redis.call("hget", KEYS[1], "enabled") == "false" then
  return 2
end
if ARGV[5] ~= "" then
  redis.call("sadd", KEYS[3], ARGV[4])
  redis.call("lpush", KEYS[4], ARGV[5])
end
return 1
