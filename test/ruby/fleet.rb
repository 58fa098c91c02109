# frozen_string_literal: true

# The Ruby half of the mixed-fleet test (test/interop/mixed-fleet.test.ts), loaded by a real Sidekiq
# 6.4.1 process:
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/fleet.rb -q default
#
# FleetJob has a TypeScript twin of the same name in test/jobs/testJobs.ts. Each run records its jid in
# the list `fleet` and counts itself under `fleet:ruby` (the tsq twin uses `fleet:tsq`), so the test can
# check that every pushed jid ran exactly once and see which side ran how many. Args are
# [pushed_by, index], e.g. ["ruby", 17].

require "sidekiq"

# redis-rb 4.8 warns on every BRPOP that 6.4.1 issues; keep the log tail readable.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

class FleetJob
  include Sidekiq::Worker

  def perform(_pushed_by, _index)
    Sidekiq.redis do |conn|
      conn.multi do |transaction|
        transaction.rpush("fleet", jid)
        transaction.incr("fleet:ruby")
      end
    end
  end
end
