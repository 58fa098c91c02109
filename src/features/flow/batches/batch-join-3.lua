-- batch-join-3.lua: makes jobs members of a batch just before they are pushed (Client#send), so a job
-- can never finish before its batch knows it. Idempotent per jid (SADD).
--
-- KEYS[1]  tsq:batch:<bid>          the batch's hash
-- KEYS[2]  tsq:batch:<bid>:pending  members that have not succeeded yet
-- KEYS[3]  tsq:batch:<bid>:unrun    members that have not run once yet
-- ARGV[1..] jids
--
-- Returns: the batch's total after the join. Errors: "NOBATCH" (expired), "FINISHED" (succeeded).
local h = KEYS[1]
if redis.call("exists", h) == 0 then
  return redis.error_reply("NOBATCH batch " .. h .. " does not exist (expired?); the jobs were not pushed")
end
if redis.call("hexists", h, "success_at") == 1 then
  return redis.error_reply("FINISHED batch " .. h .. " already succeeded; the jobs were not pushed")
end
local added = redis.call("sadd", KEYS[2], unpack(ARGV))
redis.call("sadd", KEYS[3], unpack(ARGV))
local ms = math.floor(tonumber(redis.call("hget", h, "expires_at") or "0") * 1000)
if ms > 0 then
  redis.call("pexpireat", KEYS[2], ms)
  redis.call("pexpireat", KEYS[3], ms)
end
return redis.call("hincrby", h, "total", added)
