/**
 * Ruby's `JSON.generate` (json 2.x, the generator sidekiq-unique-jobs hashes), for the values a tsq job
 * carries, so a lock digest computed here equals the gem's byte for byte.
 *
 * What Ruby sees is what it parses from tsq's wire JSON: a JavaScript number whose JSON text is an
 * integer (`1`, `1.0` in JS alike) is a Ruby Integer; any other is a Float, printed by `Float#to_s`
 * (`1.5`, `1.0e+21`, `1.0e-05`). Two things JSON from JavaScript cannot say are expressed with:
 *
 *   rubyFloat(1)              Ruby's `1.0` (a Float whose value is integral)
 *   12345678901234567890n     a Ruby Integer past 2^53 (a bigint), printed in full
 *
 * Strings are escaped as both generators do (`"`, `\`, control characters; `/`, non-ASCII and
 * U+2028 left as they are), objects keep their key order (Ruby hashes keep insertion order, and JSON
 * parsing preserves it), `toJSON` is honoured (a Date becomes its ISO string on the wire).
 */

/** A number Ruby holds as a Float: `rubyFloat(1)` is Ruby's `1.0`. Use it in a class's `lockArgs`. */
export class RubyFloat {
  constructor(readonly value: number) {
    if (!Number.isFinite(value)) throw new RangeError(`rubyFloat(${value}): Ruby's JSON cannot write NaN or Infinity`);
  }

  /** On the wire it is a plain JSON number (JavaScript's JSON has no `1.0`). */
  toJSON(): number {
    return this.value;
  }
}

export function rubyFloat(value: number): RubyFloat {
  return new RubyFloat(value);
}

/**
 * `Float#to_s`: the shortest digits that read back as the same double, in fixed notation when the
 * value has at most 16 digits before the point, integral ones at most 15, and it is at least 0.0001
 * (always with a fraction: `100.0`); else `d.ddde+XX` (Ruby 3.1: `1.0e+15`, `999999999999999.0`,
 * `1000000000000000.5`, `0.0001`, `1.0e-05`).
 */
export function rubyFloatText(value: number): string {
  if (Object.is(value, -0)) return "-0.0";
  if (value === 0) return "0.0";
  const [mantissa, exponent] = Math.abs(value).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const point = Number(exponent) + 1; // digits before the decimal point
  const sign = value < 0 ? "-" : "";
  if (point > -4 && (point < 16 || (point === 16 && digits.length > point))) {
    if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
    if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
    return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  }
  const e = point - 1;
  const fraction = digits.length > 1 ? digits.slice(1) : "0";
  return `${sign}${digits[0]}.${fraction}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

function numberText(value: number): string {
  const text = JSON.stringify(value); // "null" for NaN and Infinity, as on the wire
  return /^-?\d+$/.test(text) || text === "null" ? text : rubyFloatText(value);
}

/** The text Ruby's `JSON.generate` writes for `value` as Ruby reads it from tsq's wire JSON. */
export function rubyJson(value: unknown): string {
  return generate(value, false) ?? "null";
}

/** undefined for what JSON.stringify leaves out of an object (undefined, functions, symbols). */
function generate(value: unknown, inArray: boolean): string | undefined {
  if (value instanceof RubyFloat) return rubyFloatText(value.value);
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function")
    return generate((value as { toJSON: () => unknown }).toJSON(), inArray);
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return numberText(value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
    case "function":
    case "symbol":
      return inArray ? "null" : undefined;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.map((item) => generate(item, true)).join(",")}]`;
  const parts: string[] = [];
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const text = generate(item, false);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

/** `value` as plain JSON values (RubyFloat → its number, bigint → its decimal string), for the payload. */
export function plainJson(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? item.toString() : item)),
  );
}
