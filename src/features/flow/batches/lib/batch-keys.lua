-- lib/batch-keys.lua, included by batch-open-1.lua and batch-event-1.lua: the names of a batch's keys,
-- for the scripts that reach batches they discover as they go (a parent, its parent), so the keys cannot
-- all be passed as KEYS. Mirrors batchKey() and BATCH_KEY_PARTS in src/wire/keys/flow.ts (a test compares
-- the two lists).
--
-- BATCH_PARTS            every key of a batch: "" (the hash) and each companion's suffix
-- batch_key(prefix, bid, part)
--   prefix  "tsq:batch:" (ARGV, from keys.ts)
--   part    "" for the batch's hash, else one of BATCH_PARTS (e.g. ":pending")
local BATCH_PARTS = { "", ":pending", ":unrun", ":failed", ":dead", ":failinfo", ":open" }

local function batch_key(prefix, bid, part)
  return prefix .. bid .. part
end
