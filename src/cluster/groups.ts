/**
 * The process plan of `tsq-cluster`: which queues each child works, as GitLab's sidekiq-cluster builds
 * it from its positional GROUP arguments (`lib/gitlab/sidekiq_cluster/cli.rb`):
 *
 *   tsq-cluster "critical,default" cronjob "*"
 *
 * - Each GROUP is one comma-separated queue list; `--processes` children serve each group.
 * - `*` is every known queue (the Redis `queues` set and the queues the job module's classes declare).
 * - A bare name also selects its namespace: `cronjob` is `cronjob` plus every known `cronjob:*` queue
 *   (GitLab `expand_queues`: `[q, *all_queues.grep(/\A#{q}:/)]`), the bare name even when not known.
 * - Duplicates become weights (GitLab `counts = queues.tally`): a queue selected twice gets weight 2.
 *   One difference: `*` only adds to queues that no other entry selects, so `"*,a"` does not favour `a`
 *   but `"*,a,a"` does. With no queue selected twice every weight is 0: Sidekiq's strict order, the
 *   order of first appearance, where GitLab's all-1 tally would give Sidekiq 7's random order.
 *
 * A GROUP with `=`, `&` or `|` is a worker query in GitLab's syntax (src/platform/attributes/query.ts):
 * `tsq-cluster 'urgency=high&resource_boundary!=cpu' 'resource_boundary=cpu' '*'`. It selects the job
 * module's classes that match and works the queues their jobs go to (declared queue, routing rule,
 * namespace or `default`), each once, sorted, unweighted.
 *
 * Pure: the caller reads the known queues from Redis and the job module.
 */
import type { QueueSpec } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import type { WorkerAttributes } from "../platform/attributes/attributes.js";
import { looksLikeQuery, matches, parseQuery } from "../platform/attributes/query.js";
import type { WorkerRouter } from "../platform/attributes/WorkerRouter.js";

/** The job module's classes and the routing rules, for query groups. */
export interface GroupWorkers {
  workers: readonly WorkerAttributes[];
  router: WorkerRouter;
}

export interface ChildPlan {
  /** 0..N-1 across all groups; the child's SIDEKIQ_WORKER_ID-like number. */
  index: number;
  /** Index of the group in the GROUP arguments (or `cluster.groups`). */
  group: number;
  /** The group as given, e.g. `critical,default`; shown in logs and as the `group` metrics label. */
  groupLabel: string;
  /** The shard the child serves (src/platform/shards); absent when no shards are configured. */
  shard?: string;
  queues: QueueSpec[];
  /** Job slots of the child's default capsule (`-c`). */
  concurrency: number;
}

const WILDCARD = "*";

/**
 * The entries of one group, trimmed, in order. Throws a ConfigError naming the group when it is
 * empty, has an empty entry (`"a,,b"`), a name with whitespace, or a `*` that is not a lone entry.
 * `index` is the group's position, used in messages.
 */
export function parseGroup(group: string, index: number): string[] {
  const where = `queue group ${index} (${JSON.stringify(group)})`;
  if (group.trim() === "") {
    throw new ConfigError(
      `${where} is empty; give a comma-separated list of queues, e.g. "critical,default", or "*" for every queue`,
    );
  }
  return group.split(",").map((raw) => {
    const entry = raw.trim();
    if (entry === "") throw new ConfigError(`${where} has an empty queue name; remove the extra comma`);
    if (/\s/.test(entry)) {
      throw new ConfigError(
        `${where} has a queue name with whitespace, ${JSON.stringify(entry)}; separate queues with commas`,
      );
    }
    if (entry !== WILDCARD && entry.includes(WILDCARD)) {
      throw new ConfigError(
        `${where} has ${JSON.stringify(entry)}, but only a lone "*" is a wildcard; ` +
          `a bare name already selects its namespace ("cronjob" selects every "cronjob:*" queue)`,
      );
    }
    return entry;
  });
}

/** Checks a GROUP's syntax, as a query or a queue list with an optional `@shard`; throws a ConfigError naming the group. */
export function checkGroup(group: string, index: number): void {
  const { body, shard } = splitShard(group);
  if (shard === "")
    throw new ConfigError(`queue group ${index} (${JSON.stringify(group)}) ends in "@"; name a shard after it`);
  if (looksLikeQuery(body)) parseQuery(body, `queue group ${index}`);
  else parseGroup(body, index);
}

/** A group without its `@shard` suffix (shardGroups.ts), and the shard it names, if any. */
export function splitShard(group: string): { body: string; shard: string | undefined } {
  const at = group.lastIndexOf("@");
  if (at < 0) return { body: group, shard: undefined };
  return { body: group.slice(0, at), shard: group.slice(at + 1).trim() };
}

/** Resolves each GROUP into its queues and weights, in first-appearance order. See the file comment. */
export function resolveGroups(groups: string[], knownQueues: string[], workers?: GroupWorkers): QueueSpec[][] {
  return groups.map((group, index) => resolveGroupAt(group, index, knownQueues, workers));
}

/** Resolves one GROUP, the `index`-th (for messages). */
export function resolveGroupAt(
  group: string,
  index: number,
  knownQueues: string[],
  workers?: GroupWorkers,
): QueueSpec[] {
  return looksLikeQuery(group)
    ? resolveQueryGroup(group, index, workers)
    : resolveGroup(group, index, [...new Set(knownQueues)]);
}

function resolveQueryGroup(group: string, index: number, context: GroupWorkers | undefined): QueueSpec[] {
  const where = `queue group ${index}`;
  const query = parseQuery(group, where);
  if (context === undefined || context.workers.length === 0) {
    throw new ConfigError(
      `${where} (${JSON.stringify(group)}) is a worker query, which needs the job module's classes; ` +
        "give the module with -r or `require:` in the config file",
    );
  }
  const selected = context.workers.filter((worker) => matches(query, worker));
  if (selected.length === 0) {
    throw new ConfigError(
      `${where} (${JSON.stringify(group)}) matches no job class; run \`tsqctl workers\` to see every class's attributes`,
    );
  }
  const queues = new Set(selected.map((worker) => context.router.queueOf(worker)));
  return [...queues].sort().map((name) => ({ name, weight: 0 }));
}

function resolveGroup(group: string, index: number, known: string[]): QueueSpec[] {
  // Per queue: how many named entries select it, and how many `*` entries. Map keeps first appearance.
  const counts = new Map<string, { named: number; wildcard: number }>();
  const count = (queue: string, key: "named" | "wildcard") => {
    const entry = counts.get(queue) ?? { named: 0, wildcard: 0 };
    entry[key] += 1;
    counts.set(queue, entry);
  };
  for (const entry of parseGroup(group, index)) {
    if (entry === WILDCARD) for (const queue of known) count(queue, "wildcard");
    else for (const queue of withNamespace(entry, known)) count(queue, "named");
  }
  if (counts.size === 0) {
    throw new ConfigError(
      `queue group ${index} (${JSON.stringify(group)}) matches no queue: "*" means every known queue, and the ` +
        `known queues come from the Redis "queues" set and the job module's classes (-r), which have none; ` +
        `name the queues instead, e.g. "critical,default"`,
    );
  }
  const tally = [...counts].map(([name, { named, wildcard }]) => ({ name, weight: named > 0 ? named : wildcard }));
  const repeated = tally.some(({ weight }) => weight > 1);
  return tally.map(({ name, weight }) => ({ name, weight: repeated ? weight : 0 }));
}

/** `name` and every known `name:*` queue (GitLab `[q, *all_queues.grep(/\A#{q}:/)]`). */
function withNamespace(name: string, known: string[]): string[] {
  return [name, ...known.filter((queue) => queue.startsWith(`${name}:`))];
}

/** `processesPerGroup` children for each group, numbered 0..N-1 group after group. */
export function planChildren(
  groupsQueues: QueueSpec[][],
  processesPerGroup: number,
  concurrency: number,
  groupLabels: string[],
): ChildPlan[] {
  if (groupLabels.length !== groupsQueues.length) {
    throw new RangeError(`planChildren: ${groupsQueues.length} groups but ${groupLabels.length} labels`);
  }
  if (!Number.isInteger(processesPerGroup) || processesPerGroup < 1) {
    throw new RangeError(`planChildren: processesPerGroup must be a positive integer, got ${processesPerGroup}`);
  }
  const plan: ChildPlan[] = [];
  groupsQueues.forEach((queues, group) => {
    for (let i = 0; i < processesPerGroup; i++) {
      plan.push({
        index: plan.length,
        group,
        groupLabel: groupLabels[group] ?? "",
        // A copy per child, so one child's options can never change another's.
        queues: queues.map((queue) => ({ ...queue })),
        concurrency,
      });
    }
  });
  return plan;
}

/**
 * The `--dryrun` listing, one line per child (no trailing newline):
 *   child 0 (group 0 "a,b"): queues a (weight 2), b (weight 1); concurrency 10
 */
export function formatPlan(plan: ChildPlan[]): string {
  return plan
    .map(({ index, group, groupLabel, queues, concurrency, shard }) => {
      const list = queues.map(({ name, weight }) => (weight > 0 ? `${name} (weight ${weight})` : name)).join(", ");
      const where = shard === undefined ? "" : `shard ${shard}; `;
      return `child ${index} (group ${group} ${JSON.stringify(groupLabel)}): ${where}queues ${list}; concurrency ${concurrency}`;
    })
    .join("\n");
}

/** The `--list-queues` listing: each queue once, sorted, one per line (no trailing newline). */
export function formatQueueList(queues: string[]): string {
  return [...new Set(queues)].sort().join("\n");
}
