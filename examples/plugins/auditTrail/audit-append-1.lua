-- Appends one entry to the audit trail and trims it, atomically.
--
-- KEYS[1]  the trail (LIST, newest first)
-- ARGV[1]  the entry (JSON text)
-- ARGV[2]  entries kept (a whole number, at least 1)
--
-- Returns the trail's length after the trim (at most ARGV[2]).
redis.call("LPUSH", KEYS[1], ARGV[1])
redis.call("LTRIM", KEYS[1], 0, tonumber(ARGV[2]) - 1)
return redis.call("LLEN", KEYS[1])
