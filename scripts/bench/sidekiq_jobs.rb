# Jobs for `npm run bench -- --peer sidekiq`: sidekiq -r <this file> -c C -q default.
# Logs at WARN, like tsq's TSQ_LOG_LEVEL=warn during the bench, so per-job log lines do not count.
require "sidekiq"

# Debian's redis-rb 4.8 warns (to stderr) on every BRPOP Sidekiq 6.4.1 makes with a positional timeout:
# tens of thousands of lines per run, which would be Ruby's time spent on the bench, not Sidekiq's.
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

Sidekiq.configure_server do |config|
  config.logger.level = Logger::WARN
end

# Does nothing: the framework's own cost per job (tsq's NoopJob).
class NoopJob
  include Sidekiq::Worker

  def perform(*)
  end
end

# Enqueue->start latency: pushed_at is the pusher's CLOCK_MONOTONIC in ns (Node's process.hrtime.bigint()),
# the same clock in every process on the machine.
class LatencyJob
  include Sidekiq::Worker

  def perform(pushed_at)
    ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - Integer(pushed_at)
    Sidekiq.redis { |conn| conn.rpush("bench:latency", ns) }
  end
end
