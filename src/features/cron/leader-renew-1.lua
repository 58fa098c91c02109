-- leader-renew-1.lua: extend the leader record only while it still names this process, so a leader
-- that stalled past its TTL never renews a record another process has since taken (Sidekiq
-- Enterprise: "leaders renew and verify every 15 s").
--
-- KEYS[1]  the leader key (`dear-leader`)
-- ARGV[1]  this process's identity
-- ARGV[2]  TTL, seconds
--
-- Returns: 1 renewed (still the leader), 0 the record names another process or has expired.
if redis.call("get", KEYS[1]) == ARGV[1] then
  redis.call("expire", KEYS[1], ARGV[2])
  return 1
end
return 0
