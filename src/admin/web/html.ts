/**
 * The one way pages build HTML: a tagged template that escapes every interpolated value unless it is
 * already `Html` built by this module. Everything shown comes from Redis, which is hostile text (a job's
 * args, class, error or a process tag can hold `<script>`), so escaping is the default and there is no
 * "raw string" escape hatch for values.
 */

/** HTML that this module built, safe to interpolate as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** A value a template accepts: Html is kept, arrays are joined, null/undefined/false render nothing. */
export type Interpolated = Html | string | number | boolean | null | undefined | readonly Interpolated[];

function render(value: Interpolated): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/** `html\`<td>${job.klass}</td>\`` : the literal parts are trusted, every value is escaped. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? "")));
  return new Html(out);
}

/**
 * A URL for an `href`/`action` built from a trusted path and encoded segments. Only paths under the
 * dashboard are ever produced, so a `javascript:` value from Redis can never become a link target.
 */
export function url(base: string, ...segments: string[]): string {
  return [base.replace(/\/$/, ""), ...segments.map(encodeURIComponent)].join("/");
}

/** At most `max` characters, with an ellipsis when cut (lists show big payloads truncated). */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
