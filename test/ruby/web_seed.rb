# frozen_string_literal: true

# Ruby-made jobs for the dashboard's browser test, pushed by Sidekiq 6.4.1's own client:
#
#   REDIS_URL=redis://127.0.0.1:<port>/0 ruby test/ruby/web_seed.rb '<text>'
#
# RubyFailJob goes to queue `ruby` (a real Sidekiq runs and fails it, writing a retry), RubyWaitingJob to
# `ruby-waiting`, which nobody works. Both carry the text as their argument. Prints {} when done.
require "json"
require "sidekiq"

text = ARGV.fetch(0)
Sidekiq::Client.push("class" => "RubyFailJob", "args" => [text], "queue" => "ruby", "retry" => 3, "backtrace" => 5)
Sidekiq::Client.push("class" => "RubyWaitingJob", "args" => [text], "queue" => "ruby-waiting")
puts JSON.generate({})
