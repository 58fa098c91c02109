/**
 * The process plan of `tsq-cluster`: which queues each child works, as GitLab's sidekiq-cluster builds
 * it from its positional GROUP arguments (`lib/gitlab/sidekiq_cluster/cli.rb`):
 *
 *   tsq-cluster "critical,default" cronjob "*"
 *
 * - Each GROUP is one comma-separated queue list; `--processes` children serve each group.
 * - `*` is every known queue (the Redis `queues` set, the queues the job module's classes go to, and
 *   `default`).
 * - A bare name also selects its namespace: `cronjob` is `cronjob` plus every known `cronjob:*` queue
 *   (GitLab `expand_queues`: `[q, *all_queues.grep(/\A#{q}:/)]`), the bare name even when not known.
 * - Weights are GitLab's tally (`counts = queues.tally`, passed as `-q name,count`): every queue of a
 *   group has weight 1, which Sidekiq fetches in a random order on every fetch, so no queue of a big
 *   group starves behind the ones listed before it; a queue selected twice gets weight 2. One
 *   difference: `*` only adds to queues that no other entry selects, so `"*,a"` does not favour `a` but
 *   `"*,a,a"` does. `--strict-order` drops the weights (planChildren), for Sidekiq's strict order.
 * - With `-n/--negate` each group is replaced by the known queues it does not select (GitLab
 *   `worker_queues - queues`), each with weight 1; one that leaves nothing is an error.
 *
 * A GROUP with `=`, `&` or `|` is a worker query in GitLab's syntax (src/platform/attributes/query.ts):
 * `tsq-cluster 'urgency=high&resource_boundary!=cpu' 'resource_boundary=cpu' '*'`. It selects the job
 * module's classes that match and works the queues their jobs go to (declared queue, routing rule,
 * namespace or `default`), each once with weight 1, sorted.
 *
 * Group text with a control character is refused before anything is trimmed
 * (src/platform/config/controlCharacters.ts). Pure: the caller reads the known queues from Redis and
 * the job module.
 */
import type { QueueSpec } from "../platform/config/options.js";
import { quoted, refuseControlCharacters } from "../platform/config/controlCharacters.js";
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
  /** Job slots of the child's default capsule (src/cluster/concurrency.ts). */
  concurrency: number;
  /** Why that figure ("fixed", "5 queues + 1"); absent for the -q plan, whose figure is tsq's own. */
  concurrencyWhy?: string;
}

/** How to resolve groups: `negate` is `-n/--negate`. */
export interface ResolveOptions {
  negate?: boolean;
}

const WILDCARD = "*";

/**
 * The entries of one group, trimmed, in order. Throws a ConfigError naming the group when it is
 * empty, has an empty entry (`"a,,b"`), a name with whitespace, or a `*` that is not a lone entry.
 * `index` is the group's position, used in messages.
 */
export function parseGroup(group: string, index: number): string[] {
  const where = groupName(group, index);
  refuseControlCharacters(group, where);
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
  refuseControlCharacters(group, groupName(group, index));
  const { body, shard } = splitShard(group);
  if (shard === "")
    throw new ConfigError(`queue group ${index} (${JSON.stringify(group)}) ends in "@"; name a shard after it`);
  if (looksLikeQuery(body)) parseQuery(body, `queue group ${index}`);
  else parseGroup(body, index);
}

/** `queue group 1 ("foo")`, as every message names a group. */
function groupName(group: string, index: number): string {
  return `queue group ${index} (${quoted(group)})`;
}

/** A group without its `@shard` suffix (shardGroups.ts), and the shard it names, if any. */
export function splitShard(group: string): { body: string; shard: string | undefined } {
  const at = group.lastIndexOf("@");
  if (at < 0) return { body: group, shard: undefined };
  return { body: group.slice(0, at), shard: group.slice(at + 1).trim() };
}

/** Resolves each GROUP into its queues and weights, in first-appearance order. See the file comment. */
export function resolveGroups(
  groups: string[],
  knownQueues: string[],
  workers?: GroupWorkers,
  options: ResolveOptions = {},
): QueueSpec[][] {
  return groups.map((group, index) => resolveGroupAt(group, index, knownQueues, workers, options));
}

/** Resolves one GROUP, the `index`-th (for messages). */
export function resolveGroupAt(
  group: string,
  index: number,
  knownQueues: string[],
  workers?: GroupWorkers,
  options: ResolveOptions = {},
): QueueSpec[] {
  refuseControlCharacters(group, groupName(group, index));
  const known = [...new Set(knownQueues)];
  const selected = looksLikeQuery(group) ? resolveQueryGroup(group, index, workers) : resolveGroup(group, index, known);
  return options.negate ? negateGroup(selected, group, index, known) : selected;
}

/** The known queues `selected` leaves out, each with weight 1 (GitLab `worker_queues - queues`). */
function negateGroup(selected: QueueSpec[], group: string, index: number, known: string[]): QueueSpec[] {
  const left = new Set(selected.map(({ name }) => name));
  const rest = known.filter((name) => !left.has(name));
  if (rest.length === 0) {
    throw new ConfigError(
      `${groupName(group, index)} with -n/--negate leaves no queue: it selects every known queue ` +
        `(${known.join(", ") || "none"}; from the Redis "queues" set, the job module's classes and "default"); ` +
        "drop -n, or name fewer queues in the group",
    );
  }
  return rest.map((name) => ({ name, weight: 1 }));
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
  return [...queues].sort().map((name) => ({ name, weight: 1 }));
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
  return [...counts].map(([name, { named, wildcard }]) => ({ name, weight: named > 0 ? named : wildcard }));
}

/** `name` and every known `name:*` queue (GitLab `[q, *all_queues.grep(/\A#{q}:/)]`). */
function withNamespace(name: string, known: string[]): string[] {
  return [name, ...known.filter((queue) => queue.startsWith(`${name}:`))];
}

/** How planChildren sizes and orders each child. */
export interface PlanSettings {
  processesPerGroup: number;
  /** The slots for a child of this group (src/cluster/concurrency.ts). */
  concurrency: (queues: readonly QueueSpec[]) => { slots: number; why?: string };
  /** `--strict-order`: every weight 0, so the child works its queues in the listed order. */
  strictOrder?: boolean;
}

/** `processesPerGroup` children for each group, numbered 0..N-1 group after group. */
export function planChildren(groupsQueues: QueueSpec[][], settings: PlanSettings, groupLabels: string[]): ChildPlan[] {
  const { processesPerGroup, strictOrder = false } = settings;
  if (groupLabels.length !== groupsQueues.length) {
    throw new RangeError(`planChildren: ${groupsQueues.length} groups but ${groupLabels.length} labels`);
  }
  if (!Number.isInteger(processesPerGroup) || processesPerGroup < 1) {
    throw new RangeError(`planChildren: processesPerGroup must be a positive integer, got ${processesPerGroup}`);
  }
  const plan: ChildPlan[] = [];
  groupsQueues.forEach((queues, group) => {
    // Sized from the tally before --strict-order drops it: "a,a,b" is 3 entries either way.
    const { slots, why } = settings.concurrency(queues);
    for (let i = 0; i < processesPerGroup; i++) {
      plan.push({
        index: plan.length,
        group,
        groupLabel: groupLabels[group] ?? "",
        // A copy per child, so one child's options can never change another's.
        queues: queues.map((queue) => ({ ...queue, ...(strictOrder ? { weight: 0 } : {}) })),
        concurrency: slots,
        ...(why === undefined ? {} : { concurrencyWhy: why }),
      });
    }
  });
  return plan;
}

/** A group's queue entries as GitLab counts them for concurrency: the tally's sum, duplicates included. */
export function queueEntries(queues: readonly QueueSpec[]): number {
  return queues.reduce((sum, { weight }) => sum + Math.max(weight, 1), 0);
}

/**
 * The `--dryrun` listing, one line per child (no trailing newline):
 *   child 0 (group 0 "a,a,b"): queues a (weight 2), b (weight 1); concurrency 4 (3 queues + 1)
 */
export function formatPlan(plan: ChildPlan[]): string {
  return plan
    .map(({ index, group, groupLabel, queues, concurrency, concurrencyWhy, shard }) => {
      const list = queues.map(({ name, weight }) => (weight > 0 ? `${name} (weight ${weight})` : name)).join(", ");
      const where = shard === undefined ? "" : `shard ${shard}; `;
      const why = concurrencyWhy === undefined ? "" : ` (${concurrencyWhy})`;
      return `child ${index} (group ${group} ${quoted(groupLabel)}): ${where}queues ${list}; concurrency ${concurrency}${why}`;
    })
    .join("\n");
}

/**
 * The `--list-queues` listing: each group's queues once, sorted, one per line, a blank line between
 * groups (no trailing newline).
 */
export function formatQueueList(groups: string[][]): string {
  return groups.map((queues) => [...new Set(queues)].sort().join("\n")).join("\n\n");
}
