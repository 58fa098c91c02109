-- lib/enqueued-at.lua, included by enqueue-due-2.lua and durable-signal-5.lua: a job's text as it goes
-- onto its queue, with `enqueued_at` set as Sidekiq's enqueue sets it. The text is edited, not
-- re-encoded: cjson would rewrite numbers (big integers, floats) and key order.
--
-- stamp_enqueued_at(job, stamp)
--   job    the payload, JSON text as stored (any text: it may be hostile)
--   stamp  the new `enqueued_at`, JSON number text (float seconds, or integer ms for Sidekiq 8)
--
-- Returns: the edited text and the job's queue; or nil when this cannot be done safely: not a JSON
-- object, no queue, `"enqueued_at":` found twice (a nested one), a top-level one that is not a plain
-- number, or a job naming a lock of the lock core (a `"tsq:lock:` value: `idempotency_key`,
-- `tsq_unique_key`), whose middleware must see it again when it is enqueued. `"enqueued_at":` inside a
-- string value is never matched: JSON escapes the quotes there.
local function stamp_enqueued_at(job, stamp)
  local ok, decoded = pcall(cjson.decode, job)
  if not ok or type(decoded) ~= "table" then return nil end
  local queue = decoded["queue"]
  if type(queue) ~= "string" or queue == "" then return nil end
  if string.find(job, '"tsq:lock:', 1, true) then return nil end
  local first = string.find(job, '"enqueued_at":', 1, true)
  if first and string.find(job, '"enqueued_at":', first + 1, true) then return nil end
  local field = '"enqueued_at":' .. stamp
  local text, count = nil, 0
  if first and decoded["enqueued_at"] ~= nil then
    text, count = string.gsub(job, '"enqueued_at":%s*%-?[%d%.eE%+%-]+', field, 1)
  elseif not first and decoded["enqueued_at"] == nil then
    text, count = string.gsub(job, "}%s*$", "," .. field .. "}", 1)
  end
  if count ~= 1 then return nil end
  return text, queue
end
