# frozen_string_literal: true

# The Ruby process of the Sidekiq 7.3 and 8.0 interop tests (test/interop/modernSidekiq.ts):
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 ruby -I… sidekiq-7.3.10/bin/sidekiq -r test/ruby/modern_server.rb -q ruby
#
# jobs.rb's classes (InteropJob records what Ruby saw to `interop:ran`), fleet.rb's FleetJob, and with
# TSQ_INTEROP_ACTIVEJOB=1 activejob_jobs.rb's ActiveJob classes (Rails' ActiveJob through Sidekiq's adapter).

require_relative "jobs"
require_relative "fleet"
require_relative "activejob_jobs" if ENV["TSQ_INTEROP_ACTIVEJOB"] == "1"
