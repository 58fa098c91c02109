# frozen_string_literal: true

# Ruby jobs for the admin API tests (test/api/*.test.ts), loaded by a real Sidekiq 6.4.1 process:
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/api_jobs.rb -q default
#
# RecordJob and FailJob share their names with tsq's test jobs (test/jobs/testJobs.ts) so an entry
# made on one side can be run on the other:
#
#   RecordJob  raises ArgumentError when its first argument is "fail" (so Ruby makes real retry and
#              dead entries, which tsq's RecordJob then runs fine); otherwise records itself
#   FailJob    always succeeds in Ruby (tsq's always fails), so a tsq-made retry entry retried by
#              Ruby's API is seen to run in Ruby
#   SleepJob   sleeps args[0] seconds, to be seen in the work hash
#
# Runs are recorded with RPUSH to `ruby:ran` as {"jid","class","args"}; SleepJob RPUSHes its jid to
# `ruby:started` when it starts.

require "json"
require "sidekiq"

# redis-rb 4.8 warns on every BRPOP that 6.4.1 issues; keep the log tail readable.
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

module ApiJobs
  def self.record(job, args)
    Sidekiq.redis { |conn| conn.rpush("ruby:ran", JSON.generate({"jid" => job.jid, "class" => job.class.name, "args" => args})) }
  end
end

class RecordJob
  include Sidekiq::Worker

  def perform(*args)
    raise ArgumentError, "ruby refuses #{args.first(2).inspect}" if args.first == "fail"
    ApiJobs.record(self, args)
  end
end

class FailJob
  include Sidekiq::Worker

  def perform(*args)
    ApiJobs.record(self, args)
  end
end

class SleepJob
  include Sidekiq::Worker

  def perform(seconds)
    Sidekiq.redis { |conn| conn.rpush("ruby:started", jid) }
    sleep seconds
  end
end
