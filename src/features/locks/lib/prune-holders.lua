-- lib/prune-holders.lua, included by lock-acquire-2.lua, gitlab-concurrency-limits/limit-slot-4.lua and
-- enterprise-rate-limits/keyed-limit-6.lua: the one walk over a lock of the lock core
-- (src/features/locks/Lock.ts), a HASH of holder jid -> expiry, epoch ms.
--
-- prune_holders(key, now, visit)
--   key    the lock hash
--   now    epoch ms
--   visit  called as visit(holder, until_ms) for each live holder (expiry > now)
--
-- Holders whose expiry has passed, or is not a number (written by something else), are HDELed: a
-- crashed holder blocks no one past its expiry, whatever the key's own TTL says. O(holders).
local function prune_holders(key, now, visit)
  local fields = redis.call("hgetall", key)
  for i = 1, #fields, 2 do
    local until_ms = tonumber(fields[i + 1])
    if until_ms == nil or until_ms <= now then
      redis.call("hdel", key, fields[i])
    else
      visit(fields[i], until_ms)
    end
  end
end
