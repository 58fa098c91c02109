/**
 * Ruby values that ActiveJob serializes with a marker, as TypeScript shapes. A TypeScript job receives
 * them from a Rails `perform_later`, and `performLater` writes them back in the same form, so a value
 * read from one job can be passed on to the next unchanged:
 *
 *   Ruby                          wire                                              TypeScript
 *   Time / DateTime / TimeWithZone  {"_aj_serialized":"…TimeSerializer","value":ISO 8601}   RubyTime
 *   Date                          {"_aj_serialized":"…DateSerializer","value":"2024-01-02"}  RubyDate
 *   ActiveSupport::Duration       {"…DurationSerializer","value":300,"parts":[[:minutes,5]]} RubyDuration
 *   Symbol                        {"…SymbolSerializer","value":"draft"}                   RubySymbol
 *   BigDecimal (Rails >= 7.1)     {"…BigDecimalSerializer","value":"1.5"}                 RubyBigDecimal
 *   Range (Rails >= 7.1)          {"…RangeSerializer","begin":1,"end":5,"exclude_end":false} RubyRange
 *   Module / Class                {"…ModuleSerializer","value":"String"}                  RubyModule
 *   GlobalID (a record)           {"_aj_globalid":"gid://app/User/1"}                     GlobalId
 *   any other serializer          {"_aj_serialized":"MoneySerializer",…}                  RubyObject
 */

/** The serializer names Rails writes in `_aj_serialized`. */
export const SERIALIZERS = {
  time: "ActiveJob::Serializers::TimeSerializer",
  timeWithZone: "ActiveJob::Serializers::TimeWithZoneSerializer",
  dateTime: "ActiveJob::Serializers::DateTimeSerializer",
  date: "ActiveJob::Serializers::DateSerializer",
  duration: "ActiveJob::Serializers::DurationSerializer",
  symbol: "ActiveJob::Serializers::SymbolSerializer",
  bigDecimal: "ActiveJob::Serializers::BigDecimalSerializer",
  range: "ActiveJob::Serializers::RangeSerializer",
  module: "ActiveJob::Serializers::ModuleSerializer",
} as const;

export type RubyTimeKind = "Time" | "DateTime" | "ActiveSupport::TimeWithZone";

/**
 * A Ruby time, kept as the ISO 8601 text Rails wrote (nanoseconds and UTC offset included, which a JS
 * Date would lose). `toDate()` gives a Date to the millisecond.
 */
export class RubyTime {
  constructor(
    /** e.g. `2024-01-02T03:04:05.123456789Z` or `2024-01-02T12:04:05.123456789+09:00`. */
    readonly iso8601: string,
    readonly kind: RubyTimeKind = "Time",
    /** The TZInfo zone name Rails >= 7.1 adds for a TimeWithZone, e.g. `Asia/Tokyo`. */
    readonly timeZone?: string,
  ) {}

  /** A Ruby `Time` at this Date, written in UTC with nanosecond digits as Rails does. */
  static fromDate(date: Date): RubyTime {
    return new RubyTime(iso8601Nanos(date));
  }

  toDate(): Date {
    return new Date(this.iso8601);
  }

  toString(): string {
    return this.iso8601;
  }
}

/** A Ruby `Date` (a calendar day, no time or zone), as `YYYY-MM-DD`. */
export class RubyDate {
  constructor(readonly iso8601: string) {}

  toString(): string {
    return this.iso8601;
  }
}

export type DurationUnit = "years" | "months" | "weeks" | "days" | "hours" | "minutes" | "seconds";

/** An `ActiveSupport::Duration`: total seconds plus the parts it was built from (`5.minutes`). */
export class RubyDuration {
  constructor(
    /** Total seconds, as Rails stores it (a month counts 2,629,746 s, a year 31,556,952 s). */
    readonly seconds: number,
    readonly parts: Partial<Record<DurationUnit, number>>,
  ) {}

  toString(): string {
    return `${this.seconds} s`;
  }
}

/** A Ruby `Symbol`, such as `:draft`. */
export class RubySymbol {
  constructor(readonly name: string) {}

  toString(): string {
    return this.name;
  }
}

/** A Ruby `BigDecimal`, kept as its exact decimal text. Rails before 7.1 cannot send or read one. */
export class RubyBigDecimal {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** A Ruby `Range` (`1..5`, or `1...5` when `excludeEnd`). Rails before 7.1 cannot send or read one. */
export class RubyRange {
  constructor(
    readonly begin: unknown,
    readonly end: unknown,
    readonly excludeEnd: boolean,
  ) {}
}

/** A Ruby class or module passed by name, such as `String` or `Admin::Report`. */
export class RubyModule {
  constructor(readonly name: string) {}

  toString(): string {
    return this.name;
  }
}

/**
 * A record passed by GlobalID (`gid://app/User/42`). TypeScript cannot load the record; the job gets
 * its model name and id to look it up itself.
 */
export class GlobalId {
  constructor(readonly uri: string) {}

  /** `gid://<app>/<model>/<id>`: the parts, or undefined when the URI is not of that form. */
  private parts(): [app: string, model: string, id: string] | undefined {
    const match = /^gid:\/\/([^/]+)\/(.+)\/([^/?]+)(?:\?.*)?$/.exec(this.uri);
    return match ? [match[1]!, decodeURIComponent(match[2]!), decodeURIComponent(match[3]!)] : undefined;
  }

  get app(): string | undefined {
    return this.parts()?.[0];
  }

  get modelName(): string | undefined {
    return this.parts()?.[1];
  }

  get modelId(): string | undefined {
    return this.parts()?.[2];
  }

  toString(): string {
    return this.uri;
  }
}

/** A value written by a serializer this side does not know (an app's own): its name and raw fields. */
export class RubyObject {
  constructor(
    readonly serializer: string,
    readonly fields: Readonly<Record<string, unknown>>,
  ) {}
}

export type HashKeys = "string" | "symbol" | "indifferent";

/**
 * A hash whose Ruby key type matters, for `performLater` only: a plain object is sent as a
 * string-keyed Hash; `symbolKeys(obj)` sends `{ name: 1 }` as `{ name: 1 }` with Symbol keys;
 * `indifferentAccess(obj)` as a HashWithIndifferentAccess. A received hash is always a plain object.
 */
export class RubyHash {
  constructor(
    readonly entries: Readonly<Record<string, unknown>>,
    readonly keys: HashKeys,
  ) {}
}

/** `{ a: 1 }` as a Ruby Hash with Symbol keys (`{a: 1}`). */
export function symbolKeys(entries: Record<string, unknown>): RubyHash {
  return new RubyHash(entries, "symbol");
}

/** `{ a: 1 }` as an `ActiveSupport::HashWithIndifferentAccess`. */
export function indifferentAccess(entries: Record<string, unknown>): RubyHash {
  return new RubyHash(entries, "indifferent");
}

/** `Time#iso8601(9)` of a UTC time: `2024-01-02T03:04:05.123000000Z`. */
export function iso8601Nanos(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
}
