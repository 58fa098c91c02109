/**
 * The slot groups present on a Redis Cluster, for tools that look at every group (tsqctl stats and
 * queues, the dashboard, the supervisor's /metrics). A queue no `shards:` entry lists is a group of its
 * own, so the config cannot name them all: each reachable master is scanned for the keys every group
 * has once used (`{<group>}queues`, written with each push; `{<group>}processes`, with each heartbeat).
 * Workers also record the group they serve in `tsq:slot-groups` (the group of queue `default`), which
 * names the groups of a master that does not answer; such a master is reported with its slots.
 */
import type { Cluster } from "ioredis";
import { connect } from "../redis/connection.js";
import { SLOT_GROUPS } from "../../wire/keys.js";
import { clusterBaseUrl } from "../redis/clusterUrl.js";
import type { ShardConnections } from "./ShardConnections.js";
import type { ShardMap } from "./ShardMap.js";

/** ms each master gets to answer one SCAN call: a tool says what is down rather than wait. */
const SCAN_DEADLINE_MS = 3000;

export interface DiscoveredGroups {
  groups: string[];
  /** Masters that did not answer, as "host:port (slots a-b,...)". */
  unreachable: string[];
}

/** The group name of a `{group}queues` or `{group}processes` key; undefined for any other key. */
export function groupOfKey(key: string): string | undefined {
  return /^\{([^{}]+)\}(?:queues|processes)$/.exec(key)?.[1];
}

/** The slots `address` serves, as ranges ("0-5460,10923"), from the client's slot table. */
function slotRanges(slots: string[][], address: string): string {
  const ranges: string[] = [];
  let from = -1;
  for (let slot = 0; slot <= slots.length; slot++) {
    const mine = slots[slot]?.[0] === address;
    if (mine && from === -1) from = slot;
    if (!mine && from !== -1) {
      ranges.push(from === slot - 1 ? String(from) : `${from}-${slot - 1}`);
      from = -1;
    }
  }
  return ranges.join(",") || "none";
}

/** Scans every master of `map`'s cluster and adds the groups found to the map (ShardMap.remember). */
export async function discoverGroups(map: ShardMap): Promise<DiscoveredGroups> {
  if (!map.cluster) return { groups: map.names(), unreachable: [] };
  // The untagged connection: the URL of the default group with its path removed.
  const url = clusterBaseUrl(map.urlOf(map.names()[0]!));
  const redis = connect(url, { name: "tsq-discover", commandTimeoutMs: SCAN_DEADLINE_MS });
  const found = new Set<string>();
  const unreachable: string[] = [];
  try {
    await redis.ping().catch(() => undefined);
    const cluster = redis as unknown as Cluster;
    // Masters from the slot table (CLUSTER SLOTS lists a failed master with its slots), not the client's
    // pool of live nodes, which drops a node whose connection ended: a dead master would go unnamed.
    const live = new Map(cluster.nodes("master").map((node) => [`${node.options.host}:${node.options.port}`, node]));
    const masters = new Set(cluster.slots.map((owners) => owners?.[0]).filter((a): a is string => a !== undefined));
    for (const address of masters) {
      try {
        const node = live.get(address);
        if (node === undefined) throw new Error(`no connection to ${address}`);
        let cursor = "0";
        do {
          const [next, keys] = await node.scan(cursor, "MATCH", "{*}*", "COUNT", 1000);
          cursor = next;
          for (const key of keys) {
            const group = groupOfKey(key);
            if (group !== undefined) found.add(group);
          }
        } while (cursor !== "0");
      } catch {
        unreachable.push(`${address} (slots ${slotRanges(cluster.slots, address)})`);
      }
    }
  } finally {
    redis.disconnect();
  }
  // Groups workers registered: names the groups of a master that did not answer.
  const registry = connect(map.urlOf(map.shardOf("default")), {
    name: "tsq-discover",
    commandTimeoutMs: SCAN_DEADLINE_MS,
  });
  try {
    for (const group of await registry.smembers(SLOT_GROUPS).catch(() => [])) if (map.has(group)) found.add(group);
  } finally {
    registry.disconnect();
  }
  map.remember([...found].sort());
  return { groups: map.names(), unreachable };
}

/**
 * `shards` with the slot groups present on its cluster remembered (a no-op on single servers), for the
 * supervisor's plan and /metrics. A cluster that does not answer leaves the configured groups only.
 */
export async function withClusterGroups(shards: ShardConnections): Promise<ShardConnections> {
  if (shards.map.cluster) await discoverGroups(shards.map).catch(() => undefined);
  return shards;
}
