/**
 * What keeps the dashboard safe to expose: optional Basic or bearer authentication, a signed
 * double-submit CSRF token with the `Sec-Fetch-Site` check Sidekiq 8.1 uses, and the response headers
 * (a strict Content-Security-Policy with a nonce per response). No session store: the CSRF cookie is
 * random and the form token is its HMAC under a key that lives only in this process.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { registerSecret } from "../../platform/secrets.js";

/** Who may use the dashboard: Basic credentials, a bearer token, or both (either one admits). */
export interface WebAuth {
  username?: string;
  password?: string;
  token?: string;
}

export const CSRF_COOKIE = "tsq_csrf";
export const CSRF_FIELD = "authenticity_token";

function equalSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // Compare equal-length digests so the time taken says nothing about the secret's length or prefix.
  const ha = createHmac("sha256", "tsq-web-compare").update(a).digest();
  const hb = createHmac("sha256", "tsq-web-compare").update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** Registers the secrets so no log line or error page can ever print them. */
export function registerAuthSecrets(auth: WebAuth | undefined): void {
  registerSecret(auth?.password);
  registerSecret(auth?.token);
}

/**
 * The name of the user the request authenticates as ("token" for a bearer token, "anonymous" when
 * no auth is configured), or null when it must be refused.
 */
export function authenticate(req: IncomingMessage, auth: WebAuth | undefined): string | null {
  if (!auth || (auth.password === undefined && auth.token === undefined)) return "anonymous";
  const header = req.headers.authorization ?? "";
  const space = header.indexOf(" ");
  const scheme = header.slice(0, space).toLowerCase();
  const credentials = header.slice(space + 1).trim();
  if (scheme === "bearer" && auth.token !== undefined && equalSecret(credentials, auth.token)) return "token";
  if (scheme === "basic" && auth.password !== undefined) {
    const decoded = Buffer.from(credentials, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return null;
    const user = decoded.slice(0, colon);
    const userOk = equalSecret(user, auth.username ?? "admin");
    const passwordOk = equalSecret(decoded.slice(colon + 1), auth.password);
    if (userOk && passwordOk) return user;
  }
  return null;
}

/** Reads one cookie from the Cookie header. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class Csrf {
  /** The HMAC key; a restart makes old forms fail once, which a reload fixes. */
  private readonly key: Buffer;

  constructor(key?: string) {
    this.key = key ? Buffer.from(key) : randomBytes(32);
  }

  /** The cookie value for this browser, setting a new random one when it has none (or a malformed one). */
  cookie(req: IncomingMessage, res: ServerResponse, cookiePath: string): string {
    const existing = readCookie(req, CSRF_COOKIE);
    if (existing !== undefined && /^[0-9a-f]{64}$/.test(existing)) return existing;
    const fresh = randomBytes(32).toString("hex");
    res.appendHeader("set-cookie", `${CSRF_COOKIE}=${fresh}; Path=${cookiePath}; HttpOnly; SameSite=Strict`);
    return fresh;
  }

  /** The token a form must send back: the HMAC of the browser's cookie. */
  token(cookie: string): string {
    return createHmac("sha256", this.key).update(cookie).digest("hex");
  }

  /**
   * Why a state-changing request is refused, or null when it may go ahead: it must not come from
   * another site (`Sec-Fetch-Site`, sent by every current browser) and must carry the token that
   * matches its cookie (which a cross-site page can neither read nor set).
   */
  refuse(req: IncomingMessage, formToken: string | undefined): string | null {
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin") return `cross-site request (Sec-Fetch-Site: ${site})`;
    const cookie = readCookie(req, CSRF_COOKIE);
    if (cookie === undefined || formToken === undefined) return "missing CSRF token; reload the page and try again";
    if (!equalSecret(formToken, this.token(cookie))) return "bad CSRF token; reload the page and try again";
    return null;
  }
}

/** A fresh nonce for this response's `<script>` and `<style>` tags. */
export function nonce(): string {
  return randomBytes(16).toString("base64");
}

/** Headers every response carries (Sidekiq sends the same set, with a stricter CSP here). */
export function securityHeaders(res: ServerResponse, scriptNonce: string): void {
  res.setHeader(
    "content-security-policy",
    [
      "default-src 'none'",
      `script-src 'self' 'nonce-${scriptNonce}'`,
      `style-src 'self' 'nonce-${scriptNonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
  );
  res.setHeader("cache-control", "private, no-store");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
}
