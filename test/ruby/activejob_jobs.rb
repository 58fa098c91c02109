# frozen_string_literal: true

# ActiveJob classes for tsq's Rails interop tests (Debian's ruby-activejob 6.1 with the Sidekiq adapter).
# Loaded by a real Sidekiq 6.4.1 process (and, through modern_server.rb, by Sidekiq 7.3):
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/activejob_jobs.rb -q default -q critical
#
# and by test/ruby/activejob_push.rb, which enqueues them with perform_later. Each RecordJob run RPUSHes
# what Ruby received to `activejob:ran`, every value with its Ruby class:
#
#   {"job":"RecordJob","job_id":"…","provider_job_id":"…","queue_name":"default","priority":null,
#    "executions":1,"locale":"en","time_zone":null,"ran_at":1795264710.2,
#    "args":["Array",[["String","bob"],["Hash",[[["Symbol","count"],["Integer",3]]]]]],
#    "kwargs":["Hash",[]]}

require "json"
require "logger"
require "active_job"
require "sidekiq"
# Sidekiq >= 7.3 brings its own ActiveJob adapter, whose JobWrapper subclasses Sidekiq::ActiveJob::Wrapper
# of sidekiq/rails (which needs railties); 6.4.1 runs the adapter Rails ships.
require "sidekiq/rails" if Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("7.3")

AJ_RAN_KEY = "activejob:ran"

# redis-rb 4.8 warns on every BRPOP that 6.4.1 issues, which would bury a failing test's log tail.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

ActiveJob::Base.queue_adapter = :sidekiq
ActiveJob::Base.logger = Logger.new(nil)
I18n.available_locales = %i[en fr]

Sidekiq.configure_server do |config|
  # Poll `schedule` about every second (see jobs.rb), so a scheduled test job runs promptly.
  if config.respond_to?(:[]=)
    config[:poll_interval_average] = 1
  else
    config.options[:poll_interval_average] = 1
  end
end

module AjInterop
  # [class name, value] for scalars; containers hold the descriptions of their elements, so a test can
  # tell a Symbol key from a String key and an Integer from a Float.
  def self.describe(value)
    case value
    when ActiveSupport::HashWithIndifferentAccess
      ["HashWithIndifferentAccess", value.to_hash.map { |k, v| [describe(k), describe(v)] }]
    when Hash then ["Hash", value.map { |k, v| [describe(k), describe(v)] }]
    when Array then ["Array", value.map { |v| describe(v) }]
    when ActiveSupport::TimeWithZone then ["ActiveSupport::TimeWithZone", value.iso8601(9)]
    when Time, DateTime then [value.class.name, value.iso8601(9)]
    when Date then ["Date", value.iso8601]
    when ActiveSupport::Duration then ["ActiveSupport::Duration", [value.value, value.parts.map { |k, n| [k.to_s, n] }]]
    when Module then ["Module", value.name]
    when Symbol then ["Symbol", value.to_s]
    else [value.class.name, value]
    end
  end
end

class RecordJob < ActiveJob::Base
  queue_as :default

  def perform(*args, **kwargs)
    record = {
      "job" => self.class.name,
      "job_id" => job_id,
      "provider_job_id" => provider_job_id,
      "queue_name" => queue_name,
      "priority" => priority,
      "executions" => executions,
      "locale" => I18n.locale.to_s,
      "time_zone" => Time.zone&.name,
      "ran_at" => Time.now.to_f,
      "args" => AjInterop.describe(args),
      "kwargs" => AjInterop.describe(kwargs)
    }
    Sidekiq.redis { |conn| conn.rpush(AJ_RAN_KEY, JSON.generate(record)) }
  end
end

class FailingJob < ActiveJob::Base
  def perform(reason)
    raise ArgumentError, "failing on purpose: #{reason}"
  end
end
