# frozen_string_literal: true

# The client side of sidekiq-unique-jobs (suj_gem.rb) from the command line, for the interop tests:
#
#   ruby test/ruby/suj_lock.rb push '{"class":"X","queue":"default","args":"[1, 1.0]","lock":"until_executed"}'
#       pushes through the gem's client middleware: locked and pushed, or dropped as a duplicate.
#       "args" is Ruby source (1.0, 2**64, :sym). Prints {"jid": jid or null, "digest": ...}.
#   ruby test/ruby/suj_lock.rb unlock '{"digest":"uniquejobs:…","jid":"…","lock":"until_executed"}'
#       runs unlock.lua as the gem's server does after perform. Prints {"unlocked": jid or null}.

require_relative "suj_gem"

Sidekiq.configure_client { |config| config.client_middleware { |chain| chain.add SujClient } }

command, json = ARGV
params = JSON.parse(json)
case command
when "push"
  item = params.slice("class", "queue", "lock", "lock_ttl", "on_conflict")
  item["args"] = eval(params.fetch("args")) # test-provided Ruby literal: floats, big integers, symbols
  item["at"] = params["at"] if params["at"]
  item["jid"] = SecureRandom.hex(12)
  jid = Sidekiq::Client.push(item)
  puts JSON.generate("jid" => jid, "digest" => $digest)
when "unlock"
  item = { "jid" => params["jid"], "lock" => params["lock"], "lock_ttl" => 0 }
  unlocked = Sidekiq.redis { |conn| conn.eval(UNLOCK_LUA, keys: keys(params["digest"]).first(7), argv: argv(item)) }
  puts JSON.generate("unlocked" => unlocked)
else
  abort "suj_lock.rb: unknown command #{command.inspect}; use push or unlock"
end
