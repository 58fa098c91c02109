-- suj-lock-7.lua: take a sidekiq-unique-jobs lock for one jid, writing what the gem's queue.lua and
-- lock.lua (v7/v8) write, in one atomic step (src/features/locks/sidekiq-unique-jobs/Locksmith.ts).
--
-- The gem decides by the :LOCKED hash alone (HEXISTS for its own jid, HLEN against lock_limit), in v7,
-- v8 and v9 alike; so does this script, and a lock taken here is one the gem refuses to take again.
--
-- KEYS[1]  <digest>                  STRING  the jid last queued
-- KEYS[2]  <digest>:QUEUED           LIST    (only our own jid is removed from it)
-- KEYS[3]  <digest>:PRIMED           LIST    (idem)
-- KEYS[4]  <digest>:LOCKED           HASH    holder jid -> lock time (epoch seconds)
-- KEYS[5]  <digest>:INFO             STRING  expires with the lock
-- KEYS[6]  uniquejobs:digests        ZSET    digest -> lock time
-- KEYS[7]  uniquejobs:expiring_digests ZSET  until_expired digest -> lock time + pttl (the gem's score)
-- ARGV[1]  jid
-- ARGV[2]  pttl, ms (0: the lock never expires by itself, as the gem without lock_ttl)
-- ARGV[3]  lock type (until_executed, until_expired, ...)
-- ARGV[4]  lock_limit: most holders at once
-- ARGV[5]  now, epoch seconds (a float, as the gem's `now_f`)
--
-- Returns: { 1, jid } taken, or already held by this jid (Sidekiq's poller re-pushes the same jid);
--          { 0, a current holder } refused.
local jid = ARGV[1]
local pttl = tonumber(ARGV[2])
local limit = tonumber(ARGV[4])
if redis.call("hexists", KEYS[4], jid) == 1 then return { 1, jid } end
if redis.call("hlen", KEYS[4]) >= limit then
  return { 0, redis.call("hkeys", KEYS[4])[1] }
end
redis.call("set", KEYS[1], jid)
if ARGV[3] == "until_expired" and pttl > 0 then
  redis.call("zadd", KEYS[7], tonumber(ARGV[5]) + pttl, KEYS[1])
else
  redis.call("zadd", KEYS[6], ARGV[5], KEYS[1])
end
redis.call("hset", KEYS[4], jid, ARGV[5])
redis.call("lrem", KEYS[2], -1, jid)
redis.call("lrem", KEYS[3], 1, jid)
if pttl > 0 then
  redis.call("pexpire", KEYS[1], pttl)
  redis.call("pexpire", KEYS[4], pttl)
  redis.call("pexpire", KEYS[5], pttl)
end
return { 1, jid }
