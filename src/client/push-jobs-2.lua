-- push-jobs-2.lua: enqueue jobs as Sidekiq's client does (SADD queues <q>; LPUSH queue:<q> <job>...),
-- in one command: one round trip and one reply per push instead of two commands, and atomic.
--
-- KEYS[1]  queues         the set of known queue names
-- KEYS[2]  queue:<q>      the queue's list
-- ARGV[1]  <q>            the queue's name
-- ARGV[2..] the jobs, as JSON, oldest first (each LPUSHed, so the first pushed runs first)
--
-- Returns: the queue's length after the push.
redis.call("sadd", KEYS[1], ARGV[1])
return redis.call("lpush", KEYS[2], unpack(ARGV, 2))
