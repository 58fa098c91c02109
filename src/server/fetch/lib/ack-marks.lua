-- lib/ack-marks.lua, included by ack-jobs-1.lua and reliable-fetch.lua: removes finished jobs of
-- reliable fetch from a private in-progress list (src/server/fetch/ackMark.ts says how a job is named).
--
-- ack_marks(key, packed, whole) -> how many were removed
--   key     queue:sq|<identity>|<q>, the private list the jobs were fetched into
--   packed  the marked jobs, one after the other, each as "<length> <offset> <width> <bytes>": the entry
--           of `length` bytes whose bytes offset .. offset + width - 1 (1-based) are `bytes` (the jid and
--           what surrounds it). One string for the whole batch: an argument per job costs the worker
--           more to write than the bytes themselves.
--   whole   a table of jobs sent whole, exactly as fetched
--
-- Fewer are removed than were sent only if a job was already gone (e.g. recovered by another process
-- that took this one for dead). An ack that matches two entries (copies of one job) removes one, the
-- one nearest the tail, as LREM -1 does. Entries are matched by a lookup per distinct mark span
-- (usually one).
--
-- This runs inside every reliable fetch, on the worker's critical path, so the usual case is cheap:
-- jobs mostly finish in the order they were fetched, so the n acked jobs are usually the n oldest, at
-- the tail, and the worker sends the marks oldest first: read n entries, compare each with its mark in
-- place (no table, no substring), LTRIM them. Otherwise the whole list (about as many jobs as the process has
-- slots) is read once: rebuilt without the acked jobs when they are most of it, or one LREM per acked
-- entry (by the bytes just read) when the list is long.

-- The acks as lookup tables: whole[job] = count; marked[bytes] = the lengths of the acked entries
-- carrying those bytes (nearly always one); spans = the distinct { offset, width } to cut entries at.
local function ack_tables(packed, whole_jobs)
  local whole, marked, spans, seen = {}, {}, {}, {}
  local count = #whole_jobs
  for i = 1, #whole_jobs do
    whole[whole_jobs[i]] = (whole[whole_jobs[i]] or 0) + 1
  end
  local pos = 1
  while pos <= #packed do
    local _, stop, length, offset, width = string.find(packed, "^(%d+) (%d+) (%d+) ", pos)
    if not stop then
      error("ack_marks: malformed mark at byte " .. pos)
    end
    width = tonumber(width)
    local bytes = string.sub(packed, stop + 1, stop + width)
    pos = stop + width + 1
    count = count + 1
    local lengths = marked[bytes]
    if not lengths then
      lengths = {}
      marked[bytes] = lengths
    end
    lengths[#lengths + 1] = tonumber(length)
    local span = offset .. ":" .. width
    if not seen[span] then
      seen[span] = true
      spans[#spans + 1] = { tonumber(offset), width }
    end
  end
  return { whole = whole, marked = marked, spans = spans, count = count }
end

-- True (and the ack used up) if `job` is one of the acked jobs.
local function take(acks, job)
  local n = acks.whole[job]
  if n and n > 0 then
    acks.whole[job] = n - 1
    return true
  end
  local size = #job
  for s = 1, #acks.spans do
    local offset, width = acks.spans[s][1], acks.spans[s][2]
    local lengths = acks.marked[string.sub(job, offset, offset + width - 1)]
    if lengths then
      for l = 1, #lengths do
        if lengths[l] == size then
          table.remove(lengths, l)
          return true
        end
      end
    end
  end
  return false
end

-- The number of marks in `packed` if they are, in order, the oldest entries of `key` (its tail read
-- from the last entry back), else nil.
local function tail_count(key, packed)
  local count, at = 0, 1
  while at <= #packed do
    local _, stop, width = string.find(packed, "^%d+ %d+ (%d+) ", at)
    if not stop then
      return nil -- malformed: ack_tables says where
    end
    at = stop + tonumber(width) + 1
    count = count + 1
  end
  local tail = redis.call("lrange", key, -count, -1)
  if #tail ~= count then
    return nil
  end
  local pos = 1
  for i = count, 1, -1 do
    local _, stop, length, offset, width = string.find(packed, "^(%d+) (%d+) (%d+) ", pos)
    if not stop then
      return nil
    end
    local job, at = tail[i], tonumber(offset)
    width = tonumber(width)
    if #job ~= tonumber(length) or string.find(job, string.sub(packed, stop + 1, stop + width), at, true) ~= at then
      return nil
    end
    pos = stop + width + 1
  end
  return count
end

local function ack_marks(key, packed, whole_jobs)
  if #whole_jobs == 0 and packed ~= "" then
    local count = tail_count(key, packed)
    if count then
      redis.call("ltrim", key, 0, -(count + 1))
      return count
    end
  end
  local acks = ack_tables(packed, whole_jobs)
  if acks.count == 0 then
    return 0
  end

  local list = redis.call("lrange", key, 0, -1)
  local keep, hits = {}, {}
  -- From the tail to the head, keeping what is not acked.
  for i = #list, 1, -1 do
    if take(acks, list[i]) then
      hits[#hits + 1] = list[i]
    else
      keep[#keep + 1] = list[i]
    end
  end
  if #hits == 0 then
    return 0
  end
  if #list > 8 * #hits then
    for i = 1, #hits do
      redis.call("lrem", key, -1, hits[i])
    end
    return #hits
  end
  redis.call("del", key)
  -- LPUSH in tail-to-head order rebuilds the same order; in slices, under Lua's unpack limit.
  for from = 1, #keep, 5000 do
    redis.call("lpush", key, unpack(keep, from, math.min(from + 4999, #keep)))
  end
  return #hits
end
