/**
 * The config file's `redis:` block: the same settings as a Redis URL, as fields, plus the TLS files and
 * Sentinel credentials. It is turned into one URL (redisUrl.ts reads it back), so children, tsqctl and
 * the Client all see the same thing whichever way it was written:
 *
 *   redis:
 *     url: rediss://tsq@redis.internal:6380/0        # or sentinel: below instead
 *     password: secret                                # the ACL user's password (overrides the URL's)
 *     tls: { ca: /etc/tsq/ca.pem, cert: /etc/tsq/client.pem, key: /etc/tsq/client.key }
 *
 *   redis:
 *     cluster: ["10.0.0.1:7000", "10.0.0.2:7000"]        # Redis Cluster seed nodes (or redis:// URLs)
 *     username: tsq
 *     password: secret
 *
 *   redis:
 *     sentinel: { master_name: mymaster, sentinels: ["10.0.0.1:26379", "10.0.0.2:26379"], password: s3 }
 *     username: tsq
 *     password: secret
 *     db: 0
 */
import { ConfigError } from "../../wire/errors.js";
import { parseRedisUrl } from "../redis/redisUrl.js";
import { registerSecret } from "../secrets.js";
import {
  applySchema,
  entriesOf,
  fail,
  nested,
  nonEmptyString,
  bounded,
  stringList,
  type Schema,
  type Where,
} from "./checks.js";

interface TlsBlock {
  ca?: string;
  cert?: string;
  key?: string;
  passphrase?: string;
  servername?: string;
}

interface SentinelBlock {
  masterName?: string;
  sentinels?: string[];
  password?: string;
  username?: string;
}

interface RedisBlock {
  url?: string;
  /** Seed nodes of a Redis Cluster: "host:port" or redis:// / rediss:// URLs. */
  cluster?: string[];
  username?: string;
  password?: string;
  db?: number;
  tls?: TlsBlock;
  sentinel?: SentinelBlock;
}

/** A password: registered as a secret before anything else, and never echoed in an error. */
function secret(value: unknown, at: Where): string {
  if (typeof value === "string" && value !== "") {
    registerSecret(value);
    return value;
  }
  throw new ConfigError(`${at.file}: ${at.path} must be a non-empty string (its value is not shown: it is a secret)`);
}

const TLS: Schema<TlsBlock> = {
  ca: nonEmptyString,
  cert: nonEmptyString,
  key: nonEmptyString,
  passphrase: secret,
  servername: nonEmptyString,
};

const SENTINEL: Schema<SentinelBlock> = {
  masterName: nonEmptyString,
  sentinels: (value, at) => {
    const list = stringList(value, at);
    return list.length > 0 && list.every((item) => /^[^\s,/]+:\d+$/.test(item))
      ? list
      : fail(at, 'a non-empty list of "host:port" Sentinel addresses', value);
  },
  password: secret,
  username: nonEmptyString,
};

const REDIS: Schema<RedisBlock> = {
  url: nonEmptyString,
  cluster: (value, at) => {
    const list = stringList(value, at);
    return list.length > 0 && list.every((item) => /^((rediss?):\/\/([^@/]*@)?)?[^\s,/@]+:\d+\/?$/.test(item))
      ? list
      : fail(at, 'a non-empty list of Redis Cluster nodes, "host:port" or "redis://host:port"', value);
  },
  username: nonEmptyString,
  password: secret,
  db: bounded("db"),
  tls: nested(TLS),
  sentinel: nested(SENTINEL),
};

const TLS_PARAMETERS: [keyof TlsBlock, string][] = [
  ["ca", "tls_ca"],
  ["cert", "tls_cert"],
  ["key", "tls_key"],
  ["passphrase", "tls_key_passphrase"],
  ["servername", "tls_servername"],
];

function auth(block: RedisBlock, fallback: { username?: string; password?: string }): string {
  const username = block.username ?? fallback.username;
  const password = block.password ?? fallback.password;
  if (username === undefined && password === undefined) return "";
  return `${encodeURIComponent(username ?? "")}:${password === undefined ? "" : encodeURIComponent(password)}@`;
}

function sentinelUrl(block: RedisBlock, sentinel: Partial<SentinelBlock>, at: Where): string {
  if (block.url !== undefined) throw new ConfigError(`${at.file}: ${at.path} gives both url and sentinel; keep one`);
  if (block.tls !== undefined)
    throw new ConfigError(`${at.file}: ${at.path}.tls: TLS through Sentinel is not supported`);
  if (!sentinel.masterName || !sentinel.sentinels) {
    throw new ConfigError(`${at.file}: ${at.path}.sentinel needs master_name and sentinels (["host:port", ...])`);
  }
  const query = new URLSearchParams();
  if (sentinel.password !== undefined) query.set("sentinel_password", sentinel.password);
  if (sentinel.username !== undefined) query.set("sentinel_username", sentinel.username);
  const search = query.size > 0 ? `?${query.toString()}` : "";
  const name = encodeURIComponent(sentinel.masterName);
  return `redis+sentinel://${auth(block, {})}${sentinel.sentinels.join(",")}/${name}/${block.db ?? 0}${search}`;
}

function plainUrl(block: RedisBlock, at: Where): string {
  if (block.url === undefined)
    throw new ConfigError(`${at.file}: ${at.path} needs url (or a sentinel or cluster block)`);
  let url: URL;
  try {
    url = new URL(block.url);
    parseRedisUrl(block.url);
  } catch (error) {
    throw new ConfigError(`${at.file}: ${at.path}.url: ${error instanceof Error ? error.message : String(error)}`);
  }
  const fallback = {
    username: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
  };
  const credentials = auth(block, fallback);
  url.username = "";
  url.password = "";
  if (block.db !== undefined) url.pathname = `/${block.db}`;
  for (const [field, parameter] of TLS_PARAMETERS) {
    const value = block.tls?.[field];
    if (value !== undefined) url.searchParams.set(parameter, value);
  }
  if (block.tls !== undefined && url.protocol !== "rediss:") {
    throw new ConfigError(`${at.file}: ${at.path}.tls is set but url is not rediss://; use rediss:// for TLS`);
  }
  return url.toString().replace(/^(rediss?:\/\/)/, `$1${credentials}`);
}

/**
 * `cluster:` as one redis+cluster:// URL: the nodes as seeds, the block's user and password (else those
 * of the first node URL that has some), TLS when a node is rediss:// or the block has tls.
 */
function clusterUrl(block: RedisBlock, nodes: string[], at: Where): string {
  if (block.url !== undefined || block.sentinel !== undefined)
    throw new ConfigError(`${at.file}: ${at.path} gives cluster with ${block.url ? "url" : "sentinel"}; keep one`);
  if (block.db !== undefined && block.db !== 0)
    throw new ConfigError(`${at.file}: ${at.path}.db: a Redis Cluster has database 0 only; drop db`);
  let fallback: { username?: string; password?: string } = {};
  let tls = block.tls !== undefined;
  const hosts = nodes.map((node) => {
    const parsed = /^(rediss?):\/\/(?:([^@/]*)@)?(.*?)\/?$/.exec(node);
    if (parsed === null) return node;
    if (parsed[1] === "rediss") tls = true;
    const info = parsed[2];
    if (info && fallback.password === undefined) {
      const colon = info.indexOf(":");
      fallback = {
        username: colon === -1 ? undefined : decodeURIComponent(info.slice(0, colon)) || undefined,
        password: decodeURIComponent(colon === -1 ? info : info.slice(colon + 1)),
      };
      registerSecret(fallback.password);
    }
    return parsed[3]!;
  });
  const query = new URLSearchParams();
  for (const [field, parameter] of TLS_PARAMETERS) {
    const value = block.tls?.[field];
    if (value !== undefined) query.set(parameter, value);
  }
  const search = query.size > 0 ? `?${query.toString()}` : "";
  return `${tls ? "rediss" : "redis"}+cluster://${auth(block, fallback)}${hosts.join(",")}${search}`;
}

/** Checks a `redis:` block and returns it as one Redis URL. */
export function redisSection(value: unknown, at: Where): string {
  const block = applySchema(entriesOf(value, at), REDIS, at.file);
  const url =
    block.cluster !== undefined
      ? clusterUrl(block, block.cluster, at)
      : block.sentinel !== undefined
        ? sentinelUrl(block, block.sentinel, at)
        : plainUrl(block, at);
  try {
    parseRedisUrl(url);
  } catch (error) {
    throw new ConfigError(`${at.file}: ${at.path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return url;
}
