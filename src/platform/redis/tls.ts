/**
 * TLS to Redis (`rediss://`): the CA, client certificate and key are files, named in the URL
 * (`?tls_ca=...`), the config file (`redis: { tls: { ca, cert, key } }`, turned into those parameters)
 * or the environment (TSQ_REDIS_TLS_CA, TSQ_REDIS_TLS_CERT, TSQ_REDIS_TLS_KEY,
 * TSQ_REDIS_TLS_KEY_PASSPHRASE) when the URL names none. Without a CA the system's trusted CAs apply.
 *
 * The key file's contents and its passphrase are registered as secrets, so not even a key pasted into
 * an error message reaches an output. A failed handshake is explained: what went wrong, what to do.
 */
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { ConfigError } from "../../wire/errors.js";
import { registerSecret } from "../secrets.js";

export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
  passphrase?: string;
}

const ENVIRONMENT = {
  ca: "TSQ_REDIS_TLS_CA",
  cert: "TSQ_REDIS_TLS_CERT",
  key: "TSQ_REDIS_TLS_KEY",
  passphrase: "TSQ_REDIS_TLS_KEY_PASSPHRASE",
} as const;

/** The TLS settings the environment gives (empty variables count as unset). */
export function tlsFromEnvironment(env: NodeJS.ProcessEnv = process.env): TlsFiles {
  const files: TlsFiles = {};
  for (const [field, variable] of Object.entries(ENVIRONMENT) as [keyof TlsFiles, string][]) {
    const value = env[variable];
    if (value) files[field] = value;
  }
  registerSecret(files.passphrase);
  return files;
}

function readPem(path: string, what: string, field: keyof TlsFiles): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError(
      `cannot read the Redis TLS ${what} file ${path} (${reason}); check tls_${field} in the rediss:// URL, ` +
        `redis.tls.${field} in the config file or ${ENVIRONMENT[field]}`,
    );
  }
}

/** Every base64 line of a PEM key: one of them in an output would already be a leak. */
function registerKey(pem: Buffer): void {
  for (const line of pem.toString("utf8").split(/\r?\n/)) {
    if (!line.startsWith("-----") && line.length >= 16) registerSecret(line.trim());
  }
}

/** node:tls options for a `rediss://` connection to `host`. */
export function tlsOptions(files: TlsFiles & { servername?: string }, host: string): ConnectionOptions {
  registerSecret(files.passphrase);
  const options: ConnectionOptions = {};
  if (files.ca) options.ca = readPem(files.ca, "CA certificate", "ca");
  if (files.cert) options.cert = readPem(files.cert, "client certificate", "cert");
  if (files.key) {
    const key = readPem(files.key, "client key", "key");
    registerKey(key);
    options.key = key;
  }
  if (files.passphrase) options.passphrase = files.passphrase;
  // SNI takes host names only; for an IP the certificate is checked against its IP SANs all the same.
  const servername = files.servername ?? host;
  if (!/^[\d.]+$|:/.test(servername)) options.servername = servername;
  return options;
}

/** OpenSSL codes of a certificate the client could not verify. */
const VERIFY_CODES =
  /^(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * For a connection error that is a TLS problem, what happened and what to do; undefined otherwise.
 */
export function explainTlsError(error: unknown): string | undefined {
  const raw = (error as { code?: unknown } | null)?.code;
  const code = typeof raw === "string" ? raw : "";
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return (
      `TLS certificate problem: the Redis server's certificate does not name the host connected to (${message}); ` +
      "connect by a name the certificate lists, or set tls_servername (redis.tls.servername)"
    );
  }
  if (VERIFY_CODES.test(code)) {
    return (
      `TLS certificate problem: the Redis server's certificate could not be verified (${code}: ${message}); ` +
      "give the CA that signed it with tls_ca in the rediss:// URL, redis.tls.ca in the config file or TSQ_REDIS_TLS_CA"
    );
  }
  if (/^ERR_SSL_|^EPROTO$|^ERR_TLS_/.test(code) || /SSL routines|wrong version number|alert/i.test(message)) {
    return (
      `TLS handshake with Redis failed (${code || "TLS"}: ${message}); check that the port serves TLS ` +
      "(redis-server --tls-port), and that the client certificate and key (tls_cert, tls_key) are the ones the server's CA accepts"
    );
  }
  return undefined;
}
