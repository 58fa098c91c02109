# frozen_string_literal: true

# sidekiq-cron (Debian's 1.8.0) from the command line, for tsq's interop tests:
#
#   ruby test/ruby/cron_schedules.rb create '[{"name":"every10","cron":"*/10 * * * * *","class":"TickJob"}]'
#       saves the schedules as a Rails app's initializer does (Sidekiq::Cron::Job.load_from_array) and
#       prints their errors, {} when every one was valid
#   ruby test/ruby/cron_schedules.rb show
#       prints every schedule as sidekiq-cron reads it back: status, last enqueue time (epoch s) and jid history

require "json"
require "logger"
require "sidekiq"
require "sidekiq/cron/job"

Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
Sidekiq.logger.level = Logger::WARN

case ARGV[0]
when "create"
  puts JSON.generate(Sidekiq::Cron::Job.load_from_array(JSON.parse(ARGV.fetch(1))))
when "show"
  jobs = Sidekiq::Cron::Job.all.map do |job|
    {
      "name" => job.name,
      "status" => job.status,
      "last_enqueue_time" => job.last_enqueue_time&.to_f,
      "jid_history" => job.jid_history_from_redis
    }
  end
  puts JSON.generate(jobs.sort_by { |j| j["name"] })
else
  abort "usage: cron_schedules.rb create '<json array>' | show"
end
