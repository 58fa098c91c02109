/**
 * Routing rules: which queue a class's jobs go to, from its attributes (GitLab's
 * `Gitlab::SidekiqConfig::WorkerRouter`, `sidekiq['routing_rules']`):
 *
 *   routing_rules:
 *     - ["resource_boundary=cpu", "cpu_boundary"]
 *     - ["feature_category=importers", ""]     # "" or null: the generated name
 *     - ["*", "default"]
 *
 * The first rule whose query matches wins. A push that names its queue (the push's `queue`, `set({queue})`,
 * or the class's `static options.queue`) is not routed: an explicit queue beats a rule. A class no rule
 * matches keeps tsq's plain behaviour: `default`, or the generated name when it has a `queueNamespace`.
 */
import { ConfigError } from "../../wire/errors.js";
import {
  attributesOfName,
  generatedQueueName,
  workerAttributes,
  type AttributeSource,
  type WorkerAttributes,
} from "./attributes.js";
import { matches, parseQuery, type Query } from "./query.js";

/** One rule as written: a query and a queue (null or "" for the generated name). */
export type RoutingRule = readonly [query: string, queue: string | null];

/** The queue when nothing routes a class (Sidekiq's default). */
export const DEFAULT_QUEUE = "default";

export class WorkerRouter {
  private readonly rules: { query: Query; queue: string | null }[];

  /** Parses every rule now, so a bad rule fails at startup; `where` names the rules in errors. */
  constructor(rules: readonly RoutingRule[], where = "routing_rules") {
    this.rules = rules.map(([query, queue], index) => {
      if (queue !== null && (typeof queue !== "string" || /[\s,]/.test(queue))) {
        throw new ConfigError(
          `${where}[${index}]: the queue ${JSON.stringify(queue)} is not a queue name; give a name without spaces or commas, or "" for the generated name`,
        );
      }
      return { query: parseQuery(query, `${where}[${index}]`), queue: queue === "" ? null : queue };
    });
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** The queue the first matching rule picks, or undefined when no rule matches. */
  route(attributes: WorkerAttributes): string | undefined {
    const rule = this.rules.find(({ query }) => matches(query, attributes));
    if (!rule) return undefined;
    return rule.queue ?? generatedQueueName(attributes);
  }

  /** Where a class's jobs go when the push names no queue: declared queue, rule, namespace, `default`. */
  queueOf(attributes: WorkerAttributes): string {
    if (attributes.declaredQueue !== undefined) return attributes.declaredQueue;
    const routed = this.route(attributes);
    if (routed !== undefined) return routed;
    return attributes.queueNamespace === undefined ? DEFAULT_QUEUE : generatedQueueName(attributes);
  }

  /** Every queue a rule names (GitLab ≥ 17: `*` in sidekiq-cluster means these). */
  ruleQueues(): string[] {
    return [...new Set(this.rules.flatMap(({ queue }) => (queue === null ? [] : [queue])))];
  }
}

/** The app's rules, set at boot by `configureRouting`; none until then (importing tsq sets nothing). */
let processRouter = new WorkerRouter([]);

/**
 * Sets the routing rules every client of this process uses unless given its own (`new Client({ router })`).
 * An app that pushes calls this at boot. A worker with `routing_rules` gives its own client a router
 * of them, so two workers in one process route apart; one without rules uses these.
 */
export function configureRouting(rules: readonly RoutingRule[]): WorkerRouter {
  processRouter = new WorkerRouter(rules);
  return processRouter;
}

export function currentRouter(): WorkerRouter {
  return processRouter;
}

/**
 * The fields a push of `klass` gets from its attributes, below anything the push or the class's options
 * set: the routed queue (only when a rule matches or a namespace applies) and GitLab's job `version`.
 */
export function attributeFields(klass: string | AttributeSource, router: WorkerRouter): Record<string, unknown> {
  // A class known by name only has no version or namespace: without rules there is nothing to add.
  if (typeof klass === "string" && router.empty) return {};
  const attributes = typeof klass === "string" ? attributesOfName(klass) : workerAttributes(klass);
  const fields: Record<string, unknown> = {};
  if (attributes.declaredQueue === undefined) {
    const routed = router.route(attributes);
    if (routed !== undefined) fields.queue = routed;
    else if (attributes.queueNamespace !== undefined) fields.queue = generatedQueueName(attributes);
  }
  if (attributes.version !== undefined) fields.version = attributes.version;
  return fields;
}
