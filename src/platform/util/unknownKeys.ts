/**
 * Typos in settings objects: `new Worker({ concurency: 3 })` from JavaScript (or through a cast) would
 * otherwise be ignored and the default used. Settings of Worker, Client and Cluster refuse every
 * unknown key; job options refuse only a key near a known one (client/jobOptionKeys.ts), since other
 * keys are Sidekiq custom options that travel in the payload.
 */
import { ArgumentError } from "../../wire/errors.js";

/**
 * Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, stopping early past `max`
 * (returns max + 1 then): `retyr` → `retry` is 1, `queu` → `queue` is 1.
 */
export function editDistance(a: string, b: string, max = 2): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // Optimal string alignment over three rows (the swap looks two rows back).
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    [before, previous] = [previous, row];
  }
  return previous[b.length]!;
}

/** The known key nearest `key`, when at most `max` edits away (case aside); undefined otherwise. */
export function nearestKey(key: string, known: Iterable<string>, max = 2): string | undefined {
  let nearest: string | undefined;
  let distance = max + 1;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase(), max);
    if (d < distance) [nearest, distance] = [candidate, d];
  }
  return nearest;
}

/**
 * Throws ArgumentError at the first key of `settings` not in `known`, naming it, the nearest known key
 * when one is close, and the list: "Worker: unknown setting `concurency` (did you mean `concurrency`?)".
 */
export function refuseUnknownSettings(who: string, settings: object, known: readonly string[]): void {
  for (const key of Object.keys(settings)) {
    if (known.includes(key)) continue;
    const near = nearestKey(key, known);
    const hint = near === undefined ? "" : ` (did you mean \`${near}\`?)`;
    throw new ArgumentError(`${who}: unknown setting \`${key}\`${hint}; the settings are ${known.join(", ")}`);
  }
}

/**
 * `true` only when `Known` lists every key of `Settings`: a settings list that forgets a new option fails
 * to compile where it is declared (`const every: ListsEveryKey<Options, typeof KNOWN> = true`).
 */
export type ListsEveryKey<Settings, Known extends readonly PropertyKey[]> =
  Exclude<keyof Settings, Known[number]> extends never ? true : never;
