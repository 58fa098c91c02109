/**
 * The config file's `shards:` section: a shard name → the Redis that owns some queues (src/platform/shards).
 *
 *   shards:
 *     bulk:
 *       url: redis://10.0.0.2:6379/0     # or redis: { ... }, the same block as the top-level redis:
 *       queues: [bulk, export]
 *
 * On a Redis Cluster (top-level `redis: { cluster: [...] }`) a shard names no Redis: it is a slot group.
 */
import { ConfigError } from "../../wire/errors.js";
import { redactUrl } from "../redis/connection.js";
import { parseRedisUrl, REDIS_URL_FORMAT } from "../redis/redisUrl.js";
import { registerUrlSecrets } from "../secrets.js";
import { DEFAULT_SHARD, type ShardConfig } from "../shards/ShardMap.js";
import { applySchema, entriesOf, fail, show, stringList, type Schema, type Where } from "./checks.js";
import { redisSection } from "./redisSection.js";

interface ShardBlock {
  url?: string;
  redis?: string;
  queues?: string[];
}

const SHARD_NAME = /^[A-Za-z0-9_-]+$/;

function url(value: unknown, at: Where): string {
  if (typeof value === "string") {
    registerUrlSecrets(value); // before any message can show it
    try {
      parseRedisUrl(value);
      return value;
    } catch {
      // reported below, redacted
    }
  }
  const shown = typeof value === "string" ? redactUrl(value) : show(value);
  throw new ConfigError(`${at.file}: ${at.path} must be ${REDIS_URL_FORMAT}, got ${shown}`);
}

function queueNames(value: unknown, at: Where): string[] {
  const list = stringList(value, at);
  if (list.length === 0 || !list.every((queue) => /^[^\s,*]+$/.test(queue)))
    return fail(at, "a non-empty list of queue names, e.g. [bulk, export]", value);
  return list;
}

const SHARD: Schema<ShardBlock> = {
  url,
  redis: (value, at) => {
    const text = redisSection(value, at);
    registerUrlSecrets(text);
    return text;
  },
  queues: queueNames,
};

/** Checks `shards:`; overlaps between shards are checked when the ShardMap is built. */
export function shardsSection(value: unknown, at: Where): ShardConfig[] {
  if (value === null) return []; // `shards:` with nothing under it
  return entriesOf(value, at).map(({ key: name, value: body, path }) => {
    if (!SHARD_NAME.test(name))
      throw new ConfigError(`${at.file}: ${path}: a shard name uses letters, digits, "_" and "-" only`);
    if (name === DEFAULT_SHARD) {
      throw new ConfigError(
        `${at.file}: ${path}: "${DEFAULT_SHARD}" is the top-level Redis (redis_url or redis:); give this shard another name`,
      );
    }
    const block = applySchema(entriesOf(body, { file: at.file, path }), SHARD, at.file);
    if (block.url !== undefined && block.redis !== undefined)
      throw new ConfigError(`${at.file}: ${path} gives both url and redis; keep one`);
    if (block.queues === undefined)
      throw new ConfigError(`${at.file}: ${path}.queues is missing; list the queues this shard owns, e.g. [${name}]`);
    // No Redis of its own: a slot group of a Redis Cluster (the ShardMap refuses it on a single server).
    return { name, url: block.url ?? block.redis ?? "", queues: block.queues };
  });
}
