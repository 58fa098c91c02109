# frozen_string_literal: true

# Pushes the golden-fixture jobs with the real Ruby client (Sidekiq 6.4.1) into the Redis at REDIS_URL,
# then prints one JSON line naming, per case, the Ruby code that ran and what it returned:
#
#   {"plain":{"code":"Sidekiq::Client.push(…)","jids":["…"],"before":1795…,"after":1795…},…}
#
# `before`/`after` bracket the call (Time.now.to_f), so a test can bound `created_at` and the
# schedule score. The code strings are what test/fixtures/sidekiq-6.4.1/*.json record as `ruby`.

require "json"
require "sidekiq"
require_relative "jobs"

abort "push_golden.rb: set REDIS_URL to the test's private Redis" unless ENV["REDIS_URL"]

CASES = {
  "plain" => %q{Sidekiq::Client.push("class" => "HardJob", "args" => ["bob", 5, 1.5, {"nested" => [true, nil]}, "unicode é 😀"])},
  "perform_in" => %q{HardJob.perform_in(60, "later", 2)},
  "options" => %q{Sidekiq::Client.push("class" => "HardJob", "args" => ["important"], "retry" => 5, "queue" => "critical", "backtrace" => true, "tags" => ["alpha", "beta"])},
  "push_bulk" => %q{Sidekiq::Client.push_bulk("class" => "HardJob", "args" => [[1], [2], [3]], "queue" => "bulk")},
  "extra_fields" => %q{Sidekiq::Client.push("class" => "HardJob", "args" => [], "bid" => "abc", "custom" => {"x" => 1})},
  # Numbers whose Ruby JSON text JavaScript cannot reproduce: 1.0, exponents, -0.0, an integer > 2**53.
  "numbers" => %q{Sidekiq::Client.push("class" => "HardJob", "args" => [1.0, 2.5, 1.0e-05, 1.0e+20, -0.0, 2**60 + 1], "queue" => "numbers")}
}.freeze

result = CASES.to_h do |name, code|
  before = Time.now.to_f
  returned = eval(code) # fixed strings above, kept as strings so the fixtures can quote them
  after = Time.now.to_f
  [name, {"code" => code, "jids" => Array(returned), "before" => before, "after" => after}]
end

puts JSON.generate(result)
