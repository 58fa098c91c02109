-- record-outcome-2.lua: stores an opted-in job's end and announces it, in one atomic command
-- (src/features/outcomes/OutcomeRecorder.ts). One command instead of MULTI/SET/XADD/EXEC: a quarter of
-- the replies to parse per job. Atomic, so a waiter that sees the event also sees the key.
--
-- KEYS[1]  tsq:result:<jid>  STRING  the record JSON, expiring after ARGV[2] seconds
-- KEYS[2]  tsq:outcomes      STREAM  one entry per end, capped near ARGV[3] entries (MAXLEN ~)
-- ARGV[1]  the record JSON
-- ARGV[2]  ttl, seconds (a positive integer)
-- ARGV[3]  stream cap, entries
-- ARGV[4…] the stream entry's field, value pairs (jid, class, queue, status[, error_class, error_message])
--
-- Returns: the new stream entry's id.
redis.call("set", KEYS[1], ARGV[1], "EX", ARGV[2])
return redis.call("xadd", KEYS[2], "MAXLEN", "~", ARGV[3], "*", unpack(ARGV, 4))
