/** Plain-text formatting shared by tsqctl's listings and `top`. */

/**
 * Control characters a terminal acts on: C0 (ESC starts OSC 52, which writes the clipboard, and OSC 0,
 * which retitles the window; BEL ends them), DEL, C1 (0x9b is a one-byte CSI on some terminals) and the
 * bidi overrides and isolates that reorder what is shown.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from Redis made safe to print on a terminal: every control character is shown as an escape
 * (ESC as `\x1b`, BEL as `\x07`, a newline as `\n`, U+202E as `\u202e`), so a job field can neither
 * drive the terminal nor break a table's layout. Every table and `top` go through it; `--json` does not
 * need it (JSON.stringify escapes C0 itself).
 */
export function visible(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** 1234567 -> "1,234,567" (sidekiqmon's `delimit`). */
export function delimit(n: number): string {
  return Math.trunc(n).toLocaleString("en-US");
}

/** A count with its noun in the right number: "1 job", "2 jobs", "1,234 entries". */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${delimit(n)} ${Math.trunc(n) === 1 ? singular : plural}`;
}

/** Seconds as a short human duration: "0.42 s", "12 s", "5 min", "3 h", "2 d". */
export function duration(seconds: number): string {
  const s = Math.max(seconds, 0);
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** An epoch-seconds time relative to now: "in 15 s" or "3 min ago". */
export function relative(epochSeconds: number, now: number): string {
  const delta = epochSeconds - now;
  return delta >= 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`;
}

/** Epoch seconds as "2026-11-21 12:34:56 UTC". */
export function utcTime(epochSeconds: number): string {
  return `${new Date(epochSeconds * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** KB as "45.2 MB". */
export function megabytes(kb: number): string {
  return `${(kb / 1024).toFixed(1)} MB`;
}

/** Cuts `text` to `width` characters, marking the cut with "…". */
export function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(width - 1, 0))}…`;
}

/**
 * Columns padded to their widest cell; `right` lists the columns aligned right (numbers). Rows are
 * returned without trailing spaces. Every cell is passed through `visible`: cells carry Redis text.
 */
export function table(shownHeaders: string[], shownRows: string[][], right: ReadonlySet<number> = new Set()): string[] {
  const headers = shownHeaders.map(visible);
  const rows = shownRows.map((row) => row.map(visible));
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** Job arguments as compact JSON, clipped for a table cell. */
export function argsText(args: unknown[], width = 40): string {
  return clip(JSON.stringify(args) ?? "[]", width);
}

/** `table` for read-only inputs: the formatter a plug-in's view is handed (server/pluginViews.ts). */
export function tableLines(headings: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return table(
    [...headings],
    rows.map((row) => [...row]),
  );
}
