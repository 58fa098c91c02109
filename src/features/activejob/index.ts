/**
 * Rails ActiveJob interop: TypeScript workers run jobs enqueued with `perform_later` (wrapper.ts,
 * deserialize.ts), and `performLater` enqueues jobs for Rails (performLater.ts, serialize.ts). The
 * Ruby values ActiveJob marks on the wire have TypeScript shapes in values.ts.
 */
export { performLater, type PerformLaterOptions, type Enqueued } from "./performLater.js";
export { type ActiveJobContext, LEGACY_WRAPPER, SIDEKIQ_WRAPPER } from "./wrapper.js";
export { ActiveJobDeserializationError } from "./deserialize.js";
export {
  RubyTime,
  RubyDate,
  RubyDuration,
  RubySymbol,
  RubyBigDecimal,
  RubyRange,
  RubyModule,
  RubyObject,
  RubyHash,
  GlobalId,
  symbolKeys,
  indifferentAccess,
  type RubyTimeKind,
  type DurationUnit,
  type HashKeys,
} from "./values.js";
