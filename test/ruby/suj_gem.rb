# frozen_string_literal: true

# sidekiq-unique-jobs (v7.1, the line for Sidekiq 6) as the gem takes and releases its locks, for the
# interop tests: the gem is not packaged here, so this writes and reads its public layout itself.
#
#   SujClient   the gem's client middleware for until_* locks: prepares the item as Job.prepare does
#               (lock_* fields, digest = prefix + MD5 of Ruby's JSON of the sorted class/lock_args/queue
#               slice), takes the lock as Locksmith#lock does (queue.lua, RPOPLPUSH QUEUED -> PRIMED,
#               lock.lua) and pushes only if it got it (on_conflict log: drop)
#   SujServer   the gem's server middleware for until_executed: runs the job if its jid holds the lock
#               (or takes it), then unlock.lua in an `ensure`, as lock/until_executed.rb does
#
# Used by suj_lock.rb (a CLI) and suj_worker.rb (loaded by a real `sidekiq` process).

require "json"
require "digest"
require "securerandom"
require "sidekiq"

abort "suj_gem.rb: set REDIS_URL to the test's private Redis" unless ENV["REDIS_URL"]

# KEYS: digest queued primed locked info changelog digests [expiring_digests]
# ARGV: job_id pttl lock_type limit current_time
QUEUE_LUA = <<~LUA
  if redis.call("HEXISTS", KEYS[4], ARGV[1]) == 1 then return ARGV[1] end
  local limit = tonumber(ARGV[4])
  local queued_count = redis.call("LLEN", KEYS[2])
  local locked_count = redis.call("HLEN", KEYS[4])
  local prev_jid = redis.call("GET", KEYS[1])
  if not prev_jid then
    redis.call("SET", KEYS[1], ARGV[1])
  elseif prev_jid == ARGV[1] then
    return ARGV[1]
  elseif limit > locked_count and queued_count < limit then
    redis.call("SET", KEYS[1], ARGV[1])
  else
    return prev_jid
  end
  redis.call("LPUSH", KEYS[2], ARGV[1])
  local pttl = tonumber(ARGV[2])
  if pttl and pttl > 0 then
    redis.call("PEXPIRE", KEYS[1], pttl)
    redis.call("PEXPIRE", KEYS[2], pttl)
  end
  return ARGV[1]
LUA

LOCK_LUA = <<~LUA
  local job_id, pttl, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[5])
  if redis.call("HEXISTS", KEYS[4], job_id) == 1 then
    redis.call("LREM", KEYS[2], -1, job_id)
    redis.call("LREM", KEYS[3], 1, job_id)
    return job_id
  end
  if tonumber(ARGV[4]) <= redis.call("HLEN", KEYS[4]) then return nil end
  if ARGV[3] == "until_expired" and pttl and pttl > 0 then
    redis.call("ZADD", KEYS[8], now + pttl, KEYS[1])
  else
    redis.call("ZADD", KEYS[7], now, KEYS[1])
  end
  redis.call("HSET", KEYS[4], job_id, now)
  redis.call("LREM", KEYS[2], -1, job_id)
  redis.call("LREM", KEYS[3], 1, job_id)
  if pttl and pttl > 0 then
    redis.call("PEXPIRE", KEYS[1], pttl)
    redis.call("PEXPIRE", KEYS[4], pttl)
    redis.call("PEXPIRE", KEYS[5], pttl)
  end
  redis.call("PEXPIRE", KEYS[2], 1000)
  redis.call("PEXPIRE", KEYS[3], 1000)
  return job_id
LUA

UNLOCK_LUA = <<~LUA
  local job_id = ARGV[1]
  if redis.call("HEXISTS", KEYS[4], job_id) == 0 then
    if redis.call("LLEN", KEYS[2]) + redis.call("LLEN", KEYS[3]) + redis.call("HLEN", KEYS[4]) > 0 then return nil end
  end
  redis.call("LREM", KEYS[2], -1, job_id)
  redis.call("LREM", KEYS[3], -1, job_id)
  if ARGV[3] ~= "until_expired" then
    redis.call("DEL", KEYS[1], KEYS[5])
    redis.call("HDEL", KEYS[4], job_id)
  end
  local locked_count = redis.call("HLEN", KEYS[4])
  if locked_count < 1 then redis.call("DEL", KEYS[4]) end
  if redis.call("LLEN", KEYS[3]) == 0 then redis.call("DEL", KEYS[3]) end
  if tonumber(ARGV[4]) <= 1 and locked_count <= 1 then redis.call("ZREM", KEYS[7], KEYS[1]) end
  redis.call("LPUSH", KEYS[2], "1")
  redis.call("PEXPIRE", KEYS[2], 5000)
  return job_id
LUA

def keys(digest)
  [digest, "#{digest}:QUEUED", "#{digest}:PRIMED", "#{digest}:LOCKED", "#{digest}:INFO",
   "uniquejobs:changelog", "uniquejobs:digests", "uniquejobs:expiring_digests"]
end

def argv(item)
  ttl = item["lock_ttl"].to_i
  [item["jid"], ttl * 1000, item["lock"], item.fetch("lock_limit", 1).to_i, Time.now.to_f]
end

# Job.prepare: lock_timeout, lock_ttl (+ seconds until `at`), lock_prefix, lock_args, lock_digest.
def prepare(item)
  item["lock_timeout"] ||= 0
  ttl = item["lock_ttl"]
  item["lock_ttl"] = ttl && (ttl.to_i + (item["at"] ? item["at"].to_i - Time.now.utc.to_i : 0))
  item["lock_prefix"] ||= "uniquejobs"
  item["lock_args"] ||= item["args"]
  slice = item.slice("class", "queue", "lock_args", "apartment")
  item["lock_digest"] ||= "#{item["lock_prefix"]}:#{Digest::MD5.hexdigest(JSON.generate(slice.sort))}"
end

# The gem's client middleware for until_* locks (while_executing takes no lock at push).
class SujClient
  def call(_worker, item, _queue, _redis_pool = nil)
    prepare(item)
    $digest = item["lock_digest"] # Sidekiq::Client.push works on a copy of the item
    Sidekiq.redis do |conn|
      k = keys(item["lock_digest"])
      return yield if conn.hexists(k[3], item["jid"])
      queued = conn.eval(QUEUE_LUA, keys: k.first(7), argv: argv(item))
      return nil unless [item["jid"], "1"].include?(queued)
      primed = conn.rpoplpush(k[1], k[2])
      return nil unless [item["jid"], "1"].include?(primed)
      return yield if conn.eval(LOCK_LUA, keys: k, argv: argv(item))
    end
    nil
  end
end

# The gem's server middleware for until_executed (and its aliases): lock/until_executed.rb's execute.
class SujServer
  def call(_worker, item, _queue)
    return yield unless item["lock_digest"] && item["lock"].to_s.start_with?("until_executed")

    k = keys(item["lock_digest"])
    held = Sidekiq.redis do |conn|
      conn.hexists(k[3], item["jid"]) ||
        (conn.eval(QUEUE_LUA, keys: k.first(7), argv: argv(item)) && conn.rpoplpush(k[1], k[2]) &&
         conn.eval(LOCK_LUA, keys: k, argv: argv(item)))
    end
    return unless held # the gem's execution_failed: the job is skipped

    begin
      yield
    ensure
      Sidekiq.redis { |conn| conn.eval(UNLOCK_LUA, keys: k.first(7), argv: argv(item)) }
    end
  end
end
