-- suj-unlock-6.lua: release a jid's sidekiq-unique-jobs lock as the gem's unlock.lua (v7/v8) does
-- (src/features/locks/sidekiq-unique-jobs/Locksmith.ts): only the jid's own hold; until_expired keeps its hold (it ends by TTL).
--
-- KEYS[1]  <digest>             STRING  deleted (unless until_expired)
-- KEYS[2]  <digest>:QUEUED      LIST    gets "1" for 5 s: wakes a Ruby client waiting with lock_timeout
-- KEYS[3]  <digest>:PRIMED      LIST    deleted when empty
-- KEYS[4]  <digest>:LOCKED      HASH    HDEL jid; deleted when empty
-- KEYS[5]  <digest>:INFO        STRING  deleted (unless until_expired)
-- KEYS[6]  uniquejobs:digests   ZSET    the digest is removed when no holder is left (limit 1)
-- ARGV[1]  jid
-- ARGV[2]  lock type
-- ARGV[3]  lock_limit
--
-- Returns: 1 released; 0 the jid did not hold it (another holder is left alone).
local jid = ARGV[1]
if redis.call("hexists", KEYS[4], jid) == 0 then return 0 end
redis.call("lrem", KEYS[2], -1, jid)
redis.call("lrem", KEYS[3], -1, jid)
if ARGV[2] ~= "until_expired" then
  redis.call("del", KEYS[1], KEYS[5])
  redis.call("hdel", KEYS[4], jid)
end
local holders = redis.call("hlen", KEYS[4])
if holders < 1 then redis.call("del", KEYS[4]) end
if redis.call("llen", KEYS[3]) == 0 then redis.call("del", KEYS[3]) end
if tonumber(ARGV[3]) <= 1 and holders <= 1 then redis.call("zrem", KEYS[6], KEYS[1]) end
redis.call("lpush", KEYS[2], "1")
redis.call("pexpire", KEYS[2], 5000)
return 1
