-- lock-refresh-1.lua: extend a holder's expiry, only if it still holds the lock (src/features/locks/Lock.ts).
--
-- KEYS[1]  tsq:lock:<kind>:<id>   the lock hash (holder -> expiry, epoch ms)
-- ARGV[1]  holder (a jid)
-- ARGV[2]  ttl, ms: the new expiry is now + ttl
-- ARGV[3]  now, epoch ms
--
-- Returns: 1 refreshed; 0 not held by ARGV[1] (released, expired or never taken).
local now = tonumber(ARGV[3])
local current = tonumber(redis.call("hget", KEYS[1], ARGV[1]))
if current == nil or current <= now then return 0 end
local expiry = now + tonumber(ARGV[2])
redis.call("hset", KEYS[1], ARGV[1], string.format("%d", expiry))
local ttl = redis.call("pttl", KEYS[1])
if ttl >= 0 and now + ttl < expiry then redis.call("pexpireat", KEYS[1], string.format("%d", expiry)) end
return 1
