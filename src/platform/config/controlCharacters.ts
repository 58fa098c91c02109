/**
 * Control characters in queue names and queue groups are refused, never trimmed away.
 *
 * A stray newline from a templated unit file (`ExecStart=tsq-cluster "critical\n"`) would otherwise be
 * trimmed and the line would run as if it were right, hiding the template bug; GitLab's sidekiq-cluster
 * refuses newlines and carriage returns in its queue arguments for the same reason. tsq refuses every
 * C0 control character (U+0000 to U+001F, tab included) and DEL (U+007F): none can be part of a queue
 * name a person meant to type. Plain spaces around names stay trimmed.
 */
import { ConfigError } from "../../wire/errors.js";

/** The characters with a common name; any other C0 character is shown by its code. */
const NAMED: Readonly<Record<string, string>> = Object.freeze({
  "\n": "a newline (\\n)",
  "\r": "a carriage return (\\r)",
  "\t": "a tab (\\t)",
  "\0": "a NUL character (\\0)",
  "\x7f": "a DEL character (\\x7f)",
});

// eslint-disable-next-line no-control-regex -- matching control characters is this module's job
const CONTROL = /[\x00-\x1f\x7f]/;

/** What the first control character in `text` is, e.g. "a newline (\n)"; undefined when there is none. */
export function controlCharacterIn(text: string): string | undefined {
  const found = CONTROL.exec(text)?.[0];
  if (found === undefined) return undefined;
  return NAMED[found] ?? `a control character (\\x${found.charCodeAt(0).toString(16).padStart(2, "0")})`;
}

/** `text` quoted with every control character escaped, so a message never carries a raw one. */
export function quoted(text: string): string {
  return JSON.stringify(text).replace(/\x7f/g, "\\u007f");
}

/**
 * Throws a ConfigError when `text` holds a control character: `<what> contains a newline (\n); remove it`.
 * `what` names the argument, e.g. `queue group 1 ("foo\n")`.
 */
export function refuseControlCharacters(text: string, what: string): void {
  const found = controlCharacterIn(text);
  if (found !== undefined) throw new ConfigError(`${what} contains ${found}; remove it`);
}
