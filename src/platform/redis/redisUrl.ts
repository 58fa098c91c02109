/**
 * Redis URLs → ioredis options. Three forms, one string, so a URL carries everything a process needs
 * (flags, config, environment, and the spec each `tsq-cluster` child receives):
 *
 *   redis://[user[:password]@]host[:port][/db]
 *   rediss://[user[:password]@]host[:port][/db][?tls_ca=FILE&tls_cert=FILE&tls_key=FILE&tls_key_passphrase=P&tls_servername=NAME]
 *   redis+sentinel://[user[:password]@]host1:port1,host2:port2,.../<master-name>[/<db>][?sentinel_password=P&sentinel_username=U]
 *
 * The user-info part is the data nodes' (primary and replicas) ACL user and password; Sentinels have
 * their own (`sentinel_password`). Every password and passphrase is registered with secrets.ts.
 */
import { ConfigError } from "../../wire/errors.js";
import { registerSecret } from "../secrets.js";
import { isClusterUrl, parseClusterUrl } from "./clusterUrl.js";
import { tlsFromEnvironment, tlsOptions, type TlsFiles } from "./tls.js";

export const REDIS_URL_FORMAT =
  "a redis:// or rediss:// URL (redis://[user:password@]host[:port][/db]), a redis+sentinel:// URL " +
  "(redis+sentinel://[:password@]host1:port1,host2:port2/<master-name>[/<db>]) or a redis+cluster:// URL " +
  "(redis+cluster://[user:password@]host1:port1,host2:port2)";

/** Query parameters whose values are secrets: masked in every output. */
export const SECRET_PARAMS = ["sentinel_password", "tls_key_passphrase"] as const;

const TLS_PARAMS = { tls_ca: "ca", tls_cert: "cert", tls_key: "key", tls_key_passphrase: "passphrase" } as const;
const SENTINEL_PARAMS = new Set(["sentinel_password", "sentinel_username"]);

/** A Redis URL read: one server, a Sentinel group, or a Redis Cluster (clusterUrl.ts). */
export interface ParsedRedisUrl {
  kind: "redis" | "sentinel" | "cluster";
  username?: string;
  password?: string;
  db: number;
  /** kind "redis". */
  host?: string;
  port?: number;
  tls?: TlsFiles & { servername?: string };
  /** kind "sentinel". */
  sentinels?: { host: string; port: number }[];
  masterName?: string;
  sentinelPassword?: string;
  sentinelUsername?: string;
  /** kind "cluster": the seed nodes and the slot group (see clusterUrl.ts). */
  nodes?: { host: string; port: number }[];
  group?: string;
}

function problem(url: string, what: string): ConfigError {
  return new ConfigError(`the Redis URL ${redactRedisUrl(url)} ${what}`);
}

function decode(text: string | undefined): string | undefined {
  if (text === undefined || text === "") return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function dbOf(url: string, text: string | undefined): number {
  if (text === undefined || text === "") return 0;
  if (!/^\d+$/.test(text)) throw problem(url, `names database "${text}"; use a number such as /0`);
  return Number(text);
}

/** The raw user-info of a URL (before "@"), if any. */
function rawUserinfo(url: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\/([^@/?#]*)@/i.exec(url)?.[1];
}

function userinfo(text: string | undefined): { username?: string; password?: string } {
  if (text === undefined) return {};
  const colon = text.indexOf(":");
  const username = decode(colon === -1 ? text : text.slice(0, colon));
  const password = colon === -1 ? undefined : decode(text.slice(colon + 1));
  registerSecret(password);
  if (colon === -1 && username !== undefined) {
    // `redis://secret@host`: ioredis and redis-cli read a lone user-info as the password.
    registerSecret(username);
    return { password: username };
  }
  return { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) };
}

/** True for a well-formed redis://, rediss:// or redis+sentinel:// URL (parseRedisUrl accepts it). */
export function isRedisUrl(text: string): boolean {
  try {
    parseRedisUrl(text);
    return true;
  } catch {
    return false;
  }
}

/** Parses and checks a Redis URL; throws a ConfigError naming the problem and the fix. */
export function parseRedisUrl(url: string): ParsedRedisUrl {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === "redis+sentinel") return parseSentinel(url);
  if (isClusterUrl(url)) return parseClusterUrl(url, (what) => problem(url, what));
  if (scheme !== "redis" && scheme !== "rediss") {
    const got = scheme === undefined ? "no scheme" : `${scheme}://`;
    throw problem(
      url,
      `must start with redis:// or rediss:// (TLS), redis+sentinel:// (Sentinel) or redis+cluster:// (Redis Cluster), got ${got}`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw problem(url, `is not ${REDIS_URL_FORMAT}`);
  }
  for (const name of SECRET_PARAMS) registerSecret(parsed.searchParams.get(name));
  const result: ParsedRedisUrl = {
    kind: "redis",
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 6379,
    db: dbOf(url, parsed.pathname.replace(/^\//, "").replace(/\/$/, "")),
    ...userinfo(rawUserinfo(url)),
  };
  const tls: TlsFiles & { servername?: string } = {};
  for (const [name, value] of parsed.searchParams) {
    if (name in TLS_PARAMS) tls[TLS_PARAMS[name as keyof typeof TLS_PARAMS]] = value;
    else if (name === "tls_servername") tls.servername = value;
    else {
      throw problem(
        url,
        `has an unknown parameter "${name}"; known: ${[...Object.keys(TLS_PARAMS), "tls_servername"].join(", ")}`,
      );
    }
  }
  if (scheme === "rediss") result.tls = { ...tlsFromEnvironment(), ...tls };
  else if (Object.keys(tls).length > 0) throw problem(url, "sets TLS parameters on redis://; use rediss:// for TLS");
  return result;
}

function parseSentinel(url: string): ParsedRedisUrl {
  const match = /^redis\+sentinel:\/\/(?:([^@/?#]*)@)?([^/?#]+)\/([^/?#]+)(?:\/([^/?#]*))?\/?(?:\?([^#]*))?$/i.exec(
    url,
  );
  if (!match) {
    throw problem(url, "is not redis+sentinel://[:password@]host1:port1,host2:port2/<master-name>[/<db>]");
  }
  const [, auth, hosts, name, db, query] = match;
  const sentinels = hosts!.split(",").map((entry) => {
    const hostPort = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim());
    if (!hostPort) throw problem(url, `lists Sentinel "${entry}"; write host:port`);
    return { host: hostPort[1]!.replace(/^\[(.*)\]$/, "$1"), port: hostPort[2] ? Number(hostPort[2]) : 26379 };
  });
  const params = new URLSearchParams(query ?? "");
  for (const name of SECRET_PARAMS) registerSecret(params.get(name));
  for (const key of params.keys()) {
    if (!SENTINEL_PARAMS.has(key)) {
      throw problem(
        url,
        `has an unknown parameter "${key}"; known: ${[...SENTINEL_PARAMS].join(", ")} (TLS through Sentinel is not supported)`,
      );
    }
  }
  const sentinelPassword = params.get("sentinel_password") ?? undefined;
  const sentinelUsername = params.get("sentinel_username") ?? undefined;
  return {
    kind: "sentinel",
    sentinels,
    masterName: decode(name)!,
    db: dbOf(url, db),
    ...userinfo(auth),
    ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
    ...(sentinelUsername === undefined ? {} : { sentinelUsername }),
  };
}

/** The ioredis connection options of a parsed URL (TLS files read here). */
export function connectionOptions(parsed: ParsedRedisUrl): Record<string, unknown> {
  const auth = {
    ...(parsed.username === undefined ? {} : { username: parsed.username }),
    ...(parsed.password === undefined ? {} : { password: parsed.password }),
    db: parsed.db,
  };
  if (parsed.kind === "sentinel") {
    return {
      ...auth,
      sentinels: parsed.sentinels,
      name: parsed.masterName,
      role: "master",
      ...(parsed.sentinelPassword === undefined ? {} : { sentinelPassword: parsed.sentinelPassword }),
      ...(parsed.sentinelUsername === undefined ? {} : { sentinelUsername: parsed.sentinelUsername }),
      // Sentinel addresses retried forever, 100 ms growing to 2 s: a failover pauses work, never fails it.
      sentinelRetryStrategy: (times: number) => Math.min(times * 100, 2000),
    };
  }
  return {
    ...auth,
    host: parsed.host,
    port: parsed.port,
    ...(parsed.tls ? { tls: tlsOptions(parsed.tls, parsed.host!) } : {}),
  };
}

/** The URL with its password and secret parameters replaced by `***`, safe for logs and errors. */
export function redactRedisUrl(url: string): string {
  let result = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_m, scheme: string, info: string) => {
    const colon = info.indexOf(":");
    return `${scheme}${colon === -1 ? "***" : `${info.slice(0, colon)}:***`}@`;
  });
  for (const name of SECRET_PARAMS) result = result.replace(new RegExp(`([?&]${name}=)[^&#]*`, "g"), "$1***");
  return result;
}
