# frozen_string_literal: true

# A Ruby Sidekiq 6.4.1 process running sidekiq-cron 1.8.0, for tsq's mixed-fleet test:
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 sidekiq -r test/ruby/cron_fleet.rb -q default
#
# sidekiq-cron polls about every second (0.5–1.5 s) instead of its default 30 s, so Ruby alone enqueues
# every tick of a 10-second schedule. CronTickJob is defined here and nowhere else, so the jobs Ruby
# pushes carry its `retry: 3` while those tsq pushes from the stored message (saved by a process without
# the class) carry Sidekiq's default `retry: true`: that tells the two sides apart.

require "sidekiq"
require "sidekiq-cron"

Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

Sidekiq.configure_server do |config|
  config.options[:poll_interval_average] = 1
  config.options[:cron_poll_interval] = 1
end

class CronTickJob
  include Sidekiq::Worker
  sidekiq_options retry: 3

  def perform(*); end
end
