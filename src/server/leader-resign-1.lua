-- leader-resign-1.lua: step down on quiet/stop by deleting the leader record, but only if it still
-- names this process (a record taken over by another process is left alone).
--
-- KEYS[1]  the leader key (`dear-leader`)
-- ARGV[1]  this process's identity
--
-- Returns: 1 deleted, 0 it named another process or had expired.
if redis.call("get", KEYS[1]) == ARGV[1] then
  redis.call("del", KEYS[1])
  return 1
end
return 0
