# frozen_string_literal: true

# Enqueues ActiveJobs the way a Rails app does (perform_later through the Sidekiq adapter), one case per
# argument, and prints one JSON line: {"<case>": {"job_id": "…", "jid": "…", "at": <float or null>}}.
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 ruby test/ruby/activejob_push.rb positional keywords …

require_relative "activejob_jobs"

Sidekiq.logger.level = Logger::WARN

CASES = {
  "positional" => -> { RecordJob.perform_later("bob", 3, 2.5, nil, true, ["x", 1]) },
  "keywords" => -> { RecordJob.perform_later("bob", count: 3, tags: ["a"]) },
  "symbol_keys" => -> { RecordJob.perform_later({ name: "bob", nested: { deep: 1 } }) },
  "string_keys" => -> { RecordJob.perform_later({ "name" => "bob", "n" => 2 }) },
  "indifferent" => -> { RecordJob.perform_later(ActiveSupport::HashWithIndifferentAccess.new("a" => 1)) },
  "time" => -> { RecordJob.perform_later(Time.utc(2024, 1, 2, 3, 4, 5.123456789r)) },
  "values" => lambda {
    Time.use_zone("Tokyo") do
      RecordJob.perform_later(Date.new(2024, 1, 2), :draft, 5.minutes, 1.5.hours, String,
                              Time.zone.local(2024, 1, 2, 12, 0, 0), DateTime.new(2024, 1, 2, 3, 4, 5))
    end
  },
  "scheduled" => -> { RecordJob.set(wait: 5.seconds).perform_later("later") },
  "context" => lambda {
    I18n.with_locale(:fr) do
      Time.use_zone("UTC") { RecordJob.set(queue: "critical", priority: 7).perform_later("ctx") }
    end
  },
  "failing" => -> { FailingJob.perform_later("boom") }
}.freeze

out = {}
ARGV.each do |name|
  job = CASES.fetch(name).call
  out[name] = { "job_id" => job.job_id, "jid" => job.provider_job_id, "at" => job.scheduled_at }
end
puts JSON.generate(out)
