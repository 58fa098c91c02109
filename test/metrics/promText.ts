/**
 * A strict parser for the Prometheus text exposition format 0.0.4, for tests. It throws on anything
 * Prometheus or `promtool check metrics` would reject or warn about:
 *
 * - a sample whose family has no `# TYPE` line, or HELP/TYPE given twice or after the family's samples
 * - a family whose samples are not contiguous, or the same series (name + label set) twice
 * - bad metric or label names, bad escapes, duplicate label names, unparseable values
 * - a counter not named `*_total` or with a negative value
 * - a histogram series without `+Inf`, with decreasing buckets, or whose `_count` differs from `+Inf`
 */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  name: string;
  type: string;
  help: string | undefined;
  samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const VALUE = /^[+-]?(Inf|NaN|\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parseExposition(text: string): Map<string, ParsedFamily> {
  if (text !== "" && !text.endsWith("\n")) throw new Error("exposition does not end with a newline");
  const families = new Map<string, ParsedFamily>();
  const seen = new Set<string>();
  let current: ParsedFamily | undefined;
  const lines = text === "" ? [] : text.slice(0, -1).split("\n");
  lines.forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line.slice(0, 120))})`;
    if (line.trim() === "") throw new Error(`${where}: blank line`);
    if (line.startsWith("#")) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return; // a plain comment
      const [, kind, name, rest = ""] = meta as unknown as [string, "HELP" | "TYPE", string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      let family = families.get(name);
      if (family && family.samples.length > 0) throw new Error(`${where}: ${kind} after the family's samples`);
      if (!family) {
        if (current && current.name !== name) seen.add(current.name);
        if (seen.has(name)) throw new Error(`${where}: family ${name} is not contiguous`);
        family = { name, type: "", help: undefined, samples: [] };
        families.set(name, family);
      }
      current = family;
      if (kind === "HELP") {
        if (family.help !== undefined) throw new Error(`${where}: second HELP`);
        family.help = unescape(rest, false, where);
      } else {
        if (family.type !== "") throw new Error(`${where}: second TYPE`);
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        family.type = rest;
      }
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families);
    if (!family || family.type === "") throw new Error(`${where}: sample without a TYPE line for its family`);
    if (current !== family) throw new Error(`${where}: sample outside its family's block`);
    family.samples.push(sample);
  });
  const ids = new Set<string>();
  for (const family of families.values()) {
    if (family.help === undefined) throw new Error(`family ${family.name} has no HELP line`);
    if (family.type === "") throw new Error(`family ${family.name} has no TYPE line`);
    for (const sample of family.samples) {
      const id = seriesId(sample);
      if (ids.has(id)) throw new Error(`duplicate series ${id}`);
      ids.add(id);
    }
    if (family.type === "counter") checkCounter(family);
    if (family.type === "histogram") checkHistogram(family);
  }
  return families;
}

/** `name{a="1",b="2"}` with labels sorted: identifies a series. */
export function seriesId(sample: { name: string; labels: Record<string, string> }): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(sample.labels[k])}`);
  return `${sample.name}{${labels.join(",")}}`;
}

/** Every sample of every family, by series id. */
export function allSeries(families: Map<string, ParsedFamily>): Map<string, ParsedSample> {
  const result = new Map<string, ParsedSample>();
  for (const family of families.values()) for (const s of family.samples) result.set(seriesId(s), s);
  return result;
}

/** Sum of the samples named `name` whose labels include `match`. */
export function total(families: Map<string, ParsedFamily>, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
    }
  }
  return sum;
}

function familyOf(sampleName: string, families: Map<string, ParsedFamily>): ParsedFamily | undefined {
  const exact = families.get(sampleName);
  if (exact && exact.type !== "histogram") return exact;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family?.type === "histogram" || (family?.type === "summary" && suffix !== "_bucket")) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): ParsedSample {
  const nameEnd = line.search(/[{ ]/);
  if (nameEnd <= 0) throw new Error(`${where}: no metric name`);
  const name = line.slice(0, nameEnd);
  if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
  const labels: Record<string, string> = {};
  let i = nameEnd;
  if (line[i] === "{") {
    i++;
    while (line[i] !== "}") {
      const eq = line.indexOf("=", i);
      const labelName = line.slice(i, eq);
      if (eq < 0 || !LABEL_NAME.test(labelName) || labelName.startsWith("__"))
        throw new Error(`${where}: bad label name ${labelName}`);
      if (labelName in labels) throw new Error(`${where}: label ${labelName} twice`);
      if (line[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
      let j = eq + 2;
      let raw = "";
      while (line[j] !== '"') {
        if (j >= line.length) throw new Error(`${where}: unterminated label value`);
        if (line[j] === "\\") raw += line[j++];
        raw += line[j++];
      }
      labels[labelName] = unescape(raw, true, where);
      i = j + 1;
      if (line[i] === ",") i++;
      else if (line[i] !== "}") throw new Error(`${where}: expected , or } after a label`);
    }
    i++;
  }
  const rest = line.slice(i);
  const parts = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!parts || !VALUE.test(parts[1]!)) throw new Error(`${where}: bad value`);
  const text = parts[1]!.replace(/^\+/, "");
  const value = text === "Inf" ? Infinity : text === "-Inf" ? -Infinity : Number(text);
  return { name, labels, value };
}

function unescape(text: string, quoteAllowed: boolean, where: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "n") return "\n";
    if (c === '"' && quoteAllowed) return '"';
    throw new Error(`${where}: bad escape \\${c}`);
  });
}

function checkCounter(family: ParsedFamily): void {
  if (!family.name.endsWith("_total")) throw new Error(`counter ${family.name} is not named *_total`);
  for (const s of family.samples) if (!(s.value >= 0)) throw new Error(`counter ${seriesId(s)} is ${s.value}`);
}

function checkHistogram(family: ParsedFamily): void {
  const series = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = seriesId({ name: family.name, labels: rest });
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${seriesId(s)} has no le`);
      entry.buckets.push([le === "+Inf" ? Infinity : Number(le), s.value]);
    } else if (s.name.endsWith("_sum")) entry.sum = s.value;
    else entry.count = s.value;
  }
  for (const [key, { buckets, sum, count }] of series) {
    if (buckets.at(-1)?.[0] !== Infinity) throw new Error(`${key} has no +Inf bucket last`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0])) throw new Error(`${key}: le not increasing`);
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${key}: buckets not cumulative`);
    }
    if (sum === undefined || count === undefined) throw new Error(`${key} lacks _sum or _count`);
    if (count !== buckets.at(-1)![1]) throw new Error(`${key}: _count ${count} != +Inf bucket ${buckets.at(-1)![1]}`);
  }
}
