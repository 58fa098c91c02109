/**
 * Secrets never reach an output. Two nets, because one is not enough:
 *
 *  1. Every password tsq is given (Redis URLs from flags, config, environment; Sentinel and TLS
 *     passphrases) is registered here before anything is logged, and `redactText` replaces each
 *     occurrence, raw, percent-encoded or JSON-escaped, in every log line (the logger's stream hook),
 *     every message a CLI prints, and every HTTP error body.
 *  2. Credentials in URL form (`scheme://user:pass@host`) are masked wherever they appear, registered
 *     or not: a mistyped flag (`--redis_url=redis://:pw@host`) is echoed by the option parser before
 *     tsq knows it is a URL.
 *
 * Errors are logged through `safeError`, which keeps only name, message, stack and code: ioredis
 * attaches the failed command with its arguments (`AUTH <password>`) to reply errors.
 */

/** Secrets shorter than this are not scrubbed from free text: "ab" would mangle every line. URL-form
 * credentials and error arguments are still masked. 4 characters. */
const MIN_SCRUBBED_LENGTH = 4;
const MASK = "***";

const secrets = new Set<string>();
/** Longest first, so a secret that contains another is replaced whole. */
let ordered: string[] = [];

/** Registers a secret and the forms it may take in output. Idempotent; empty values are ignored. */
export function registerSecret(secret: string | undefined | null): void {
  if (!secret || secret.length < MIN_SCRUBBED_LENGTH) return;
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  try {
    forms.add(decodeURIComponent(secret));
  } catch {
    // not percent-encoded text: nothing to add
  }
  let added = false;
  for (const form of forms) {
    if (form.length >= MIN_SCRUBBED_LENGTH && !secrets.has(form)) {
      secrets.add(form);
      added = true;
    }
  }
  if (added) ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** Registers the password (and a lone user-info part, which some clients read as one) of a URL. */
export function registerUrlSecrets(url: string | undefined | null): void {
  if (!url) return;
  registerParameterSecrets(url);
  const userinfo = /^(?:[a-z][a-z0-9+.-]*:)?\/\/([^@/?#]*)@/i.exec(url.replace(/^[a-z][a-z0-9+.-]*(?=\/\/)/i, ""))?.[1];
  if (userinfo === undefined) return;
  const colon = userinfo.indexOf(":");
  registerSecret(colon === -1 ? userinfo : userinfo.slice(colon + 1));
}

/** URL parameters that carry secrets (Sentinel password, TLS key passphrase); masked like passwords. */
// The value ends at the next parameter, a space, a quote, or a ": " that follows the URL in a message.
const SECRET_PARAMETERS = /([?&](?:sentinel_password|tls_key_passphrase)=)([^&#\s'"<>]*?)(?=[&#\s'"<>]|:\s|:$|$)/g;

function registerParameterSecrets(url: string): void {
  for (const match of url.matchAll(SECRET_PARAMETERS)) registerSecret(match[2]);
}

/** Registers URL passwords found in command-line arguments (`--redis-url=URL`, `--redis-url URL`). */
export function registerArgvSecrets(argv: readonly string[]): void {
  for (const arg of argv) registerUrlSecrets(arg.slice(arg.indexOf("=") + 1));
}

// "//" (after a scheme, or a mistyped one: `redis//`), then user-info up to the "@" before the host.
// The user name (before ":") is kept.
const URL_CREDENTIALS = /(\/\/)([^\s@/'"<>]*)@/g;

/** `text` with every registered secret and every URL password replaced by `***`. */
export function redactText(text: string): string {
  let result = text;
  if (result.includes("//")) {
    result = result.replace(URL_CREDENTIALS, (_match, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(":");
      return `${scheme}${colon === -1 ? MASK : `${userinfo.slice(0, colon)}:${MASK}`}@`;
    });
  }
  if (result.includes("_pass")) result = result.replace(SECRET_PARAMETERS, `$1${MASK}`);
  for (const secret of ordered) {
    if (result.includes(secret)) result = result.split(secret).join(MASK);
  }
  return result;
}

/** Registers the secrets of the environment's Redis URL at load, before any option parsing logs. */
registerUrlSecrets(process.env.REDIS_URL);

export interface SafeError {
  type: string;
  message: string;
  stack?: string;
  code?: string | number;
  /** The Redis command that failed, by name only (its arguments may hold a password). */
  command?: string;
  cause?: SafeError;
}

/** What may be logged of an error: no arguments, no attached objects; secrets masked. */
export function safeError(error: unknown, depth = 0): SafeError {
  if (!(error instanceof Error)) {
    return { type: typeof error, message: redactText(typeof error === "string" ? error : describe(error)) };
  }
  const result: SafeError = { type: error.name || "Error", message: redactText(error.message) };
  if (error.stack) result.stack = redactText(error.stack);
  const extra = error as Error & { code?: unknown; command?: { name?: unknown } };
  if (typeof extra.code === "string" || typeof extra.code === "number") result.code = extra.code;
  if (typeof extra.command?.name === "string") result.command = extra.command.name;
  if (error.cause !== undefined && depth < 3) result.cause = safeError(error.cause, depth + 1);
  return result;
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
