/**
 * Splits a JSON object's text into its top-level fields' raw value texts, without parsing the values.
 *
 * Why: JavaScript numbers cannot keep what Ruby wrote. `1.0` parses to the integer 1, `-0.0` to 0,
 * and integers past 2^53 lose digits, so re-serializing a job that Ruby wrote would change its
 * arguments' types and values. tsq re-emits a field's original text while its value is unchanged.
 */

function skipWhitespace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `i` is at an opening quote; returns the index just past the closing quote. */
function endOfString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x5c)
      j += 2; // backslash: skip the escaped character
    else if (c === 0x22) return j + 1;
    else j++;
  }
  return text.length;
}

function endOfValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return endOfString(text, i);
  if (first === "{" || first === "[") {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const c = text[j];
      if (c === '"') {
        j = endOfString(text, j);
        continue;
      }
      if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !",}] \n\r\t".includes(text[j]!)) j++;
  return j;
}

/** Raw value text of each top-level field of a JSON object (last one wins, as in JSON.parse). */
export function splitTopLevel(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let i = skipWhitespace(text, 0);
  if (text[i] !== "{") return fields;
  i++;
  for (;;) {
    i = skipWhitespace(text, i);
    if (i >= text.length || text[i] === "}") return fields;
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text[i] !== '"') return fields;
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd);
    if (text[i] !== ":") return fields;
    i = skipWhitespace(text, i + 1);
    const valueEnd = endOfValue(text, i);
    fields.set(key, text.slice(i, valueEnd));
    i = valueEnd;
  }
}

/** True when `raw` is a JSON text for exactly `value`, as JavaScript sees it. */
export function sameAsRaw(value: unknown, raw: string): boolean {
  // Nearly always the raw text is what JSON.stringify writes (tsq's own payloads, Sidekiq's compact
  // JSON): one string comparison then, instead of parsing the field again (a retry-all of 100,000 jobs
  // spent a fifth of its time here). Only text written differently takes the parse below.
  let text: string;
  try {
    text = typeof value === "number" ? String(value) : JSON.stringify(value);
  } catch (error) {
    // Nested too deep for JSON.stringify (a hostile job's args, thousands of arrays deep): such a value
    // was parsed from `raw` and nothing in tsq rebuilds one, so the text read is the text to keep, and
    // the job's failure can still be recorded.
    if (error instanceof RangeError) return true;
    throw error;
  }
  if (text === raw) return true;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof value === "number") return typeof parsed === "number" && (parsed === value || Object.is(parsed, value));
    if (value === null || typeof value !== "object") return parsed === value;
    return JSON.stringify(parsed) === JSON.stringify(value);
  } catch {
    return false;
  }
}
