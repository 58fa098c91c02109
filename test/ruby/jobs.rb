# frozen_string_literal: true

# Job classes for tsq's interop tests, loaded by a real Sidekiq 6.4.1 process (and, through
# modern_server.rb, by Sidekiq 7.3 and 8.0):
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/jobs.rb -q default -q critical
#
# Each job records what Ruby saw into the Redis list `interop:ran` (RPUSH, one JSON object per run),
# so a test can compare it with what tsq pushed:
#
#   {"class":"InteropJob","jid":"…","queue":"default","args":[…],"arg_types":[…],
#    "ran_at":1795264710.22,"created_at":1795264707.35,"created_at_class":"Float",
#    "enqueued_at":1795264707.35,"enqueued_at_class":"Float","payload_keys":["retry","queue",…]}

require "json"
require "sidekiq"

RAN_KEY = "interop:ran"

# redis-rb 4.8 warns on every BRPOP that 6.4.1 issues ("Passing the timeout as a positional argument
# is deprecated"), which would bury a failing test's log tail. 7.x and 8.x use redis-client instead.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

module Interop
  # Hands the job hash to the job instance: a 6.4.1 Worker only receives `args` and `jid`.
  class CapturePayload
    def call(worker, job, _queue)
      worker.payload = job if worker.respond_to?(:payload=)
      yield
    end
  end

  # Ruby's view of a JSON value's types, e.g. [1, 1.5, {"a" => nil}] => ["Integer", "Float", {"a" => "NilClass"}].
  def self.types_of(value)
    case value
    when Array then value.map { |v| types_of(v) }
    when Hash then value.transform_values { |v| types_of(v) }
    else value.class.name
    end
  end
end

Sidekiq.configure_server do |config|
  # 6.4.1 polls `schedule` every poll_interval_average * (0.5..1.5) seconds, after an initial wait of
  # rand * 5 s when the interval is set (10 s more when it is not; Scheduled::Poller#initial_wait).
  # 1 s keeps a performIn(3) test short.
  # 7.x and 8.x hand a Sidekiq::Config (`config[:key]`); 6.4.1 hands the Sidekiq module (`options`).
  if config.respond_to?(:[]=)
    config[:poll_interval_average] = 1
  else
    config.options[:poll_interval_average] = 1
  end

  config.server_middleware do |chain|
    chain.add Interop::CapturePayload
  end
end

class InteropJob
  include Sidekiq::Worker

  attr_accessor :payload

  def perform(*args)
    job = payload || {}
    record = {
      "class" => self.class.name,
      "jid" => jid,
      "queue" => job["queue"],
      "args" => args,
      "arg_types" => Interop.types_of(args),
      "ran_at" => Time.now.to_f,
      "created_at" => job["created_at"],
      "created_at_class" => job["created_at"].class.name,
      "enqueued_at" => job["enqueued_at"],
      "enqueued_at_class" => job["enqueued_at"].class.name,
      "payload_keys" => job.keys
    }
    Sidekiq.redis { |conn| conn.rpush(RAN_KEY, JSON.generate(record)) }
  end
end

# The class name used by the golden-fixture pushes (test/ruby/push_golden.rb); never run by the tests.
class HardJob
  include Sidekiq::Worker

  def perform(*); end
end

# Raises with the text it is given, so a real Sidekiq writes a Ruby-made retry (error message and compressed
# backtrace) for the dashboard's browser test.
class RubyFailJob
  include Sidekiq::Worker
  sidekiq_options retry: 3, backtrace: 5

  def perform(text)
    raise ArgumentError, text
  end
end
