-- ack-jobs-1.lua: acknowledge finished jobs of reliable fetch in one call: remove each from the process's
-- private in-progress list (src/server/fetch/ackMark.ts says how a job is named).
--
-- KEYS[1]  queue:sq|<identity>|<q>   the private list the jobs were fetched into
-- ARGV[1]  the marked jobs, one after the other, each as "<length> <offset> <width> <bytes>": the entry
--          of `length` bytes whose bytes offset .. offset + width - 1 (1-based) are `bytes` (the jid and
--          what surrounds it). One argument for the whole batch: an argument per job costs the worker
--          more to write than the bytes themselves.
-- ARGV[2…] jobs sent whole, exactly as fetched
--
-- Returns: how many were removed (fewer than were sent only if a job was already gone, e.g. recovered
-- by another process that took this one for dead).
--
-- The work is lib/ack-marks.lua's.
-- include: lib/ack-marks.lua

return ack_marks(KEYS[1], ARGV[1], { unpack(ARGV, 2) })
