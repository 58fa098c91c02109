-- lock-acquire-2.lua: take a lock of the lock core (src/features/locks/Lock.ts) for one holder, atomically.
--
-- A lock is a HASH: field = holder (a jid), value = the holder's expiry in epoch milliseconds. Up to
-- ARGV[3] holders may hold it at once (1 for a mutex such as deduplication; more for a limiter).
-- Expired holders are dropped here, so a crashed holder blocks no one past its expiry, whatever the
-- key's own TTL says.
--
-- KEYS[1]  tsq:lock:<kind>:<id>   the lock hash
-- KEYS[2]  a flag key: with ARGV[5] == "1" it is SET to "1" (PX ARGV[2]) when the lock is refused and
--          DELeted when it is taken (GitLab's reschedule_once signal); untouched otherwise
-- ARGV[1]  holder (a jid)
-- ARGV[2]  ttl, ms: the holder's expiry is now + ttl
-- ARGV[3]  most holders at once
-- ARGV[4]  now, epoch ms
-- ARGV[5]  "1" to use the flag key, "0" not to
--
-- A holder that already holds the lock takes it again (re-entrant: Sidekiq's poller re-pushes a due job
-- with the same jid); its expiry is extended to now + ttl, never shortened.
--
-- Returns: { 1, holder } taken; { 0, a current holder } refused.
-- include: lib/prune-holders.lua
local now = tonumber(ARGV[4])
local expiry = now + tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local others = 0
local other = nil
local latest = expiry
local mine = false
prune_holders(KEYS[1], now, function(holder, until_ms)
  if holder == ARGV[1] then
    mine = true
    if until_ms > expiry then expiry = until_ms end
  else
    others = others + 1
    other = other or holder
    if until_ms > latest then latest = until_ms end
  end
end)
if mine or others < limit then
  if expiry > latest then latest = expiry end
  redis.call("hset", KEYS[1], ARGV[1], string.format("%d", expiry))
  redis.call("pexpireat", KEYS[1], string.format("%d", latest))
  if ARGV[5] == "1" then redis.call("del", KEYS[2]) end
  return { 1, ARGV[1] }
end
if ARGV[5] == "1" then redis.call("set", KEYS[2], "1", "PX", ARGV[2]) end
return { 0, other }
