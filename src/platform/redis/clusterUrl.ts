/**
 * Redis Cluster URLs: the seed nodes, the ACL user, TLS, and the slot group a connection works in.
 *
 *   redis+cluster://[user[:password]@]host1:port1,host2:port2,...[/<group>]
 *   rediss+cluster://...[/<group>][?tls_ca=FILE&tls_cert=FILE&tls_key=FILE&tls_key_passphrase=P&tls_servername=NAME]
 *
 * The nodes are seeds: the client learns the rest from CLUSTER SLOTS. `<group>` (URL-encoded) is the
 * slot group: every key of the connection is written `{<group>}<key>`, so Redis hashes only the group
 * name and all of a group's keys share one slot (one master), and every Lua script and MULTI of the group
 * stays inside it. Without a group the connection adds no tag (tools looking at the whole cluster).
 */
import { ConfigError } from "../../wire/errors.js";
import { registerSecret } from "../secrets.js";
import { tlsFromEnvironment, type TlsFiles } from "./tls.js";

export const CLUSTER_URL_FORMAT =
  "redis+cluster://[user:password@]host1:port1,host2:port2[/<group>] (rediss+cluster:// for TLS)";

const TLS_PARAMS = { tls_ca: "ca", tls_cert: "cert", tls_key: "key", tls_key_passphrase: "passphrase" } as const;

export interface ParsedClusterUrl {
  kind: "cluster";
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  /** The slot group; undefined for a connection that adds no tag. */
  group?: string;
  tls?: TlsFiles & { servername?: string };
  /** A cluster has database 0 only. */
  db: 0;
}

/** True for `redis+cluster://` and `rediss+cluster://`. */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

/** A group name usable inside a hash tag: no braces (they would end the tag early), not empty. */
export function checkGroupName(group: string, where: string): void {
  if (group === "" || /[{}]/.test(group))
    throw new ConfigError(`${where}: slot group "${group}" must be non-empty and free of "{" and "}"`);
}

/** The hash tag put before every key of `group`: `{group}`. */
export function groupTag(group: string): string {
  return `{${group}}`;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Parses a cluster URL; `problem(what)` builds the error (the caller redacts the URL). Credentials are
 * registered as secrets.
 */
export function parseClusterUrl(url: string, problem: (what: string) => ConfigError): ParsedClusterUrl {
  const match = /^(rediss?)\+cluster:\/\/(?:([^@/?#]*)@)?([^/?#]+)(?:\/([^/?#]*))?\/?(?:\?([^#]*))?$/i.exec(url);
  if (!match) throw problem(`is not ${CLUSTER_URL_FORMAT}`);
  const [, scheme, auth, hosts, group, query] = match;
  const nodes = hosts!.split(",").map((entry) => {
    const hostPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry.trim());
    if (!hostPort) throw problem(`lists node "${entry}"; write host:port`);
    return { host: hostPort[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(hostPort[2]) };
  });
  const result: ParsedClusterUrl = { kind: "cluster", nodes, db: 0 };
  if (auth !== undefined && auth !== "") {
    const colon = auth.indexOf(":");
    const username = colon === -1 ? "" : decode(auth.slice(0, colon));
    const password = decode(colon === -1 ? auth : auth.slice(colon + 1));
    registerSecret(password);
    if (username !== "") result.username = username;
    if (password !== "") result.password = password;
  }
  if (group !== undefined && group !== "") {
    const name = decode(group);
    if (/[{}]/.test(name)) throw problem(`names slot group "${name}"; a group name has no "{" or "}"`);
    result.group = name;
  }
  const tls: TlsFiles & { servername?: string } = {};
  for (const [name, value] of new URLSearchParams(query ?? "")) {
    if (name === "tls_key_passphrase") registerSecret(value);
    if (name in TLS_PARAMS) tls[TLS_PARAMS[name as keyof typeof TLS_PARAMS]] = value;
    else if (name === "tls_servername") tls.servername = value;
    else
      throw problem(
        `has an unknown parameter "${name}"; known: ${[...Object.keys(TLS_PARAMS), "tls_servername"].join(", ")}`,
      );
  }
  if (scheme!.toLowerCase() === "rediss") result.tls = { ...tlsFromEnvironment(), ...tls };
  else if (Object.keys(tls).length > 0) throw problem("sets TLS parameters on redis+cluster://; use rediss+cluster://");
  return result;
}

/** `url` (a cluster URL) for slot group `group`: its path replaced by the group's name. */
export function clusterUrlFor(url: string, group: string): string {
  const match = /^(rediss?\+cluster:\/\/[^/?#]+)(?:\/[^?#]*)?(\?[^#]*)?$/i.exec(url);
  if (!match) throw new ConfigError(`not a Redis Cluster URL: ${CLUSTER_URL_FORMAT}`);
  return `${match[1]}/${encodeURIComponent(group)}${match[2] ?? ""}`;
}

/** `url` (a cluster URL) without a group: a connection that adds no tag. */
export function clusterBaseUrl(url: string): string {
  const match = /^(rediss?\+cluster:\/\/[^/?#]+)(?:\/[^?#]*)?(\?[^#]*)?$/i.exec(url);
  if (!match) throw new ConfigError(`not a Redis Cluster URL: ${CLUSTER_URL_FORMAT}`);
  return `${match[1]}${match[2] ?? ""}`;
}

/** The group a cluster URL names (its path), if any. */
export function groupOfUrl(url: string): string | undefined {
  const group = /^rediss?\+cluster:\/\/[^/?#]+\/([^/?#]+)/i.exec(url)?.[1];
  return group === undefined ? undefined : decode(group);
}
