# frozen_string_literal: true

# Loaded by a real Sidekiq 6.4.1 process for the interop tests: the gem's server middleware
# (suj_gem.rb) and a job class tsq also declares (test/jobs/sujJobs.ts), which records its run in the
# list `ran` (its jid) after sleeping args[1] seconds.
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/suj_worker.rb -q default

require_relative "suj_gem"

Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add SujServer }
  config.client_middleware { |chain| chain.add SujClient }
end

class SujExecutedJob
  include Sidekiq::Worker

  def perform(_id, seconds = 0)
    sleep(seconds.to_f)
    Sidekiq.redis { |conn| conn.rpush("ran", jid) }
  end
end
