/**
 * Worker-matching queries in GitLab's syntax (`Gitlab::SidekiqConfig::WorkerMatcher`), used by
 * `tsq-cluster` groups and by routing rules:
 *
 *   resource_boundary!=cpu&urgency=high|tags=git_access,gitaly
 *
 * Precedence as GitLab parses it: the query is split on `|` first (OR, loosest), each part on `&` (AND),
 * and each term is `attribute=values` or `attribute!=values`, where `,` joins values into a set: the term
 * holds when the worker's value (or, for `tags`, any of its tags) is in the set; `!=` negates that. So
 * `a=1&b=2|c=3` is `(a=1 AND b=2) OR c=3`. A lone `*` matches every worker.
 *
 * Stricter than GitLab, so a typo never silently matches nothing: a term must match
 * `^\w+!?=[\w:,]+$` in full (GitLab only anchors the start), empty clauses are errors, `urgency` and
 * `resource_boundary` values must be known ones, and `has_external_dependencies` takes `true`/`false`
 * (GitLab reads any other value as false). Every error names the bad token.
 */
import { ConfigError } from "../../wire/errors.js";
import { RESOURCE_BOUNDARIES, URGENCIES, generatedQueueName, type WorkerAttributes } from "./attributes.js";

export const WILDCARD = "*";

/** The attributes a query can test, and how each reads a worker: a list of values (set semantics). */
const PREDICATES = {
  worker_name: (w: WorkerAttributes) => [w.workerName],
  feature_category: (w: WorkerAttributes) => (w.featureCategory === undefined ? [] : [w.featureCategory]),
  has_external_dependencies: (w: WorkerAttributes) => [String(w.externalDependencies)],
  urgency: (w: WorkerAttributes) => [w.urgency],
  resource_boundary: (w: WorkerAttributes) => [w.resourceBoundary],
  tags: (w: WorkerAttributes) => [...w.tags],
  queue_namespace: (w: WorkerAttributes) => (w.queueNamespace === undefined ? [] : [w.queueNamespace]),
  // GitLab's `name` is the worker's own queue name: the declared queue, else the generated one.
  name: (w: WorkerAttributes) => [w.declaredQueue ?? generatedQueueName(w)],
} satisfies Record<string, (w: WorkerAttributes) => string[]>;

type Attribute = keyof typeof PREDICATES;

/** Values an attribute may take, where there is a closed list. */
const ALLOWED: Partial<Record<Attribute, readonly string[]>> = {
  urgency: URGENCIES,
  resource_boundary: RESOURCE_BOUNDARIES,
  has_external_dependencies: ["true", "false"],
};

const TERM = /^(\w+)(!?=)([\w:,]+)$/;

export interface Term {
  attribute: Attribute;
  negated: boolean;
  values: ReadonlySet<string>;
}

/** A parsed query: `null` for `*`, else OR of ANDs of terms. */
export type Query = { readonly source: string; readonly any: readonly (readonly Term[])[] | null };

/** A malformed query; `where` says which query it is (e.g. `queue group 1`, `routing_rules[0]`). */
function queryError(where: string, source: string, problem: string): ConfigError {
  return new ConfigError(
    `${where}: the query ${JSON.stringify(source)} ${problem}. A query is terms like "urgency=high" or ` +
      '"resource_boundary!=cpu" joined by "&" (and) and "|" (or), values joined by ",", or a lone "*"',
  );
}

/** Parses a query; throws a ConfigError naming the bad token. `where` prefixes the message. */
export function parseQuery(source: string, where = "query"): Query {
  const text = source.trim();
  if (text === WILDCARD) return { source, any: null };
  if (text === "") throw queryError(where, source, "is empty");
  const any = text.split("|").map((clause) => {
    if (clause.trim() === "") throw queryError(where, source, 'has an empty clause around "|"');
    return clause.split("&").map((raw) => parseTerm(raw.trim(), where, source));
  });
  return { source, any };
}

function parseTerm(token: string, where: string, source: string): Term {
  if (token === "") throw queryError(where, source, 'has an empty term around "&"');
  if (token === WILDCARD) throw queryError(where, source, 'has "*" combined with other terms; "*" must stand alone');
  const match = TERM.exec(token);
  if (!match) {
    const hint = /\s/.test(token)
      ? " (a term has no spaces inside)"
      : /=/.test(token)
        ? " (values are letters, digits, _ and :)"
        : " (expected attribute=value or attribute!=value)";
    throw queryError(where, source, `has an invalid term ${JSON.stringify(token)}${hint}`);
  }
  const [, name, operator, list] = match as unknown as [string, string, string, string];
  if (!(name in PREDICATES)) {
    throw queryError(
      where,
      source,
      `has an unknown attribute ${JSON.stringify(name)} in ${JSON.stringify(token)} (known: ${Object.keys(PREDICATES).join(", ")})`,
    );
  }
  const attribute = name as Attribute;
  const values = list.split(",");
  if (values.some((value) => value === "")) {
    throw queryError(where, source, `has an empty value in ${JSON.stringify(token)}; remove the extra comma`);
  }
  const allowed = ALLOWED[attribute];
  const unknown = allowed ? values.find((value) => !allowed.includes(value)) : undefined;
  if (unknown !== undefined) {
    throw queryError(
      where,
      source,
      `has ${attribute}=${JSON.stringify(unknown)} in ${JSON.stringify(token)}, which no worker can have (one of: ${allowed!.join(", ")})`,
    );
  }
  return { attribute, negated: operator === "!=", values: new Set(values) };
}

/** Whether the worker matches the query. */
export function matches(query: Query, worker: WorkerAttributes): boolean {
  if (query.any === null) return true;
  return query.any.some((all) => all.every((term) => termHolds(term, worker)));
}

function termHolds(term: Term, worker: WorkerAttributes): boolean {
  const hit = PREDICATES[term.attribute](worker).some((value) => term.values.has(value));
  return term.negated ? !hit : hit;
}

/** Whether a group or rule text is a query rather than a queue list: it has an operator. */
export function looksLikeQuery(text: string): boolean {
  return /[=&|]/.test(text);
}
