/** Plain-text formatting shared by tsqctl's listings and `top`. */

/** 1234567 -> "1,234,567" (sidekiqmon's `delimit`). */
export function delimit(n: number): string {
  return Math.trunc(n).toLocaleString("en-US");
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
 * returned without trailing spaces.
 */
export function table(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string[] {
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
