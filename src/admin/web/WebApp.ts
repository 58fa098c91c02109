/**
 * The dashboard as one request handler, `(req, res, next?)`, that any Node server can mount: node:http
 * directly, or Express/Connect/Fastify middleware (`app.use("/tsq", handler)`). It reads and writes
 * Redis only through `tsq/api`, so it administers Ruby Sidekiq processes and jobs as well as tsq's.
 *
 * Order of checks for every request: mount prefix → authentication → static assets → route →
 * (POST) read-only → CSRF → form body → action. Errors never show a stack or a secret.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Redis } from "ioredis";
import { Stats } from "../api/index.js";
import { logger, type Logger } from "../../platform/logger.js";
import { redactText } from "../../platform/secrets.js";
import { HttpError, type RequestContext, type RouteResult } from "./context.js";
import { html } from "./html.js";
import { layout } from "./layout.js";
import { match } from "./routes.js";
import { PacedRetries } from "./PacedRetries.js";
import { ASSET_MAX_AGE, Assets } from "./assets.js";
import { readForm } from "./body.js";
import { DEFAULT_SHARD } from "../../platform/shards/ShardMap.js";
import { isUnreachable } from "../../platform/redis/connection.js";
import {
  Csrf,
  CSRF_FIELD,
  authenticate,
  nonce,
  registerAuthSecrets,
  securityHeaders,
  type WebAuth,
} from "./security.js";

export interface WebOptions {
  /** The connection to read and write through; never closed by the dashboard. */
  redis: Redis;
  /**
   * The other shards of a sharded Redis (docs/shards.md), each served under `/shards/<name>/` with a
   * switcher on every page; `redis` is the default shard, at the root. Never closed by the dashboard.
   */
  shards?: readonly { name: string; redis: Redis }[];
  /** The path the dashboard is mounted at, such as "/tsq" ("" or "/" for the root). */
  prefix?: string;
  /** Refuse every state-changing request (403) and hide the buttons. */
  readOnly?: boolean;
  /** Basic credentials and/or a bearer token; without it anyone who reaches the port may act. */
  auth?: WebAuth;
  /** The CSRF HMAC key (default: random per process). Give one when several processes serve one host. */
  csrfKey?: string;
  /** Where the audit lines go (default: tsq's logger). */
  logger?: Logger;
}

export interface WebHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** Cancels the paced retries it runs and waits for their last batch; call it before closing Redis. */
  stop(): Promise<void>;
}

export function createWebHandler(options: WebOptions): WebHandler {
  const prefix = (options.prefix ?? "").replace(/\/+$/, "");
  const csrf = new Csrf(options.csrfKey);
  const log = () => options.logger ?? logger();
  registerAuthSecrets(options.auth);
  const assets = new Assets();
  const paced = new PacedRetries();

  const shardNames = options.shards?.length ? [DEFAULT_SHARD, ...options.shards.map((shard) => shard.name)] : [];

  /** The shard a path names (`/shards/<name>/...`), its connection, and the path within it. */
  function shardOf(path: string): { shard: string; redis: Redis; rest: string; prefix: string } {
    const named = /^\/shards\/([^/]+)(\/.*)?$/.exec(path);
    if (!named) return { shard: DEFAULT_SHARD, redis: options.redis, rest: path, prefix: "" };
    let name: string;
    try {
      name = decodeURIComponent(named[1]!);
    } catch {
      throw new HttpError(404, "no such shard (the name is not valid percent-encoding)");
    }
    const found = options.shards?.find((shard) => shard.name === name);
    if (!found) throw new HttpError(404, `no shard named "${name}" (shards: ${shardNames.join(", ") || "none"})`);
    return { shard: name, redis: found.redis, rest: named[2] ?? "/", prefix: `/shards/${encodeURIComponent(name)}` };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, fullPath: string, rootBase: string): Promise<void> {
    const scriptNonce = nonce();
    securityHeaders(res, scriptNonce);
    const user = authenticate(req, options.auth);
    if (user === null) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="tsq", charset="UTF-8"', "content-type": "text/plain" });
      res.end("authentication required\n");
      return;
    }
    const { shard, redis, rest: path, prefix: shardPrefix } = shardOf(fullPath);
    const base = rootBase + shardPrefix;
    const asset = path.startsWith("/assets/") ? await assets.get(path.slice("/assets/".length)) : null;
    if (asset) {
      res.writeHead(200, { "content-type": asset.type, "cache-control": `public, max-age=${ASSET_MAX_AGE}` });
      res.end(req.method === "HEAD" ? undefined : asset.body);
      return;
    }
    const method = req.method ?? "GET";
    const found = match(method, path);
    if (!found.def) throw new HttpError(found.known ? 405 : 404, found.known ? "method not allowed" : "no such page");
    let form = new URLSearchParams();
    if (method === "POST") {
      if (options.readOnly) throw new HttpError(403, "the dashboard is read-only; nothing was changed");
      form = await readForm(req);
      const refused = csrf.refuse(req, form.get(CSRF_FIELD) ?? undefined);
      if (refused) {
        log().warn({ web: true, user, path }, `web: refused a POST: ${refused}`);
        throw new HttpError(403, `${refused}; nothing was changed`);
      }
    }
    const ctx: RequestContext = {
      req,
      res,
      redis,
      base,
      shard,
      shards: shardNames,
      rootBase,
      query: new URL(req.url ?? "/", "http://x").searchParams,
      params: found.params,
      form,
      readOnly: options.readOnly === true,
      user,
      csrfToken: csrf.token(csrf.cookie(req, res, rootBase || "/")), // one cookie for every shard
      nonce: scriptNonce,
      paced,
      audit: (action, target, count) =>
        log().info({ audit: true, user, action, target, count }, `web: ${user} ${action} ${target} (${count})`),
    };
    try {
      await send(ctx, await found.def.handler(ctx));
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      // Host and port only: the connection's password never reaches a page.
      const { host, port } = redis.options;
      throw new HttpError(
        503,
        `Redis unreachable: shard "${shard}" at ${host ?? "?"}:${port ?? "?"} did not answer in time; the other shards are unaffected`,
      );
    }
  }

  async function send(ctx: RequestContext, result: RouteResult): Promise<void> {
    const { res } = ctx;
    if (result.kind === "done") return;
    if (result.kind === "redirect") {
      res.writeHead(303, { location: result.location });
      res.end();
      return;
    }
    if (result.kind === "json") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(result.value));
      return;
    }
    const stats = await new Stats(ctx.redis).fetch();
    res.writeHead(result.status ?? 200, { "content-type": "text/html; charset=utf-8" });
    res.end(ctx.req.method === "HEAD" ? undefined : layout(ctx, result.title, result.body, stats).text);
  }

  function fail(res: ServerResponse, error: unknown): void {
    const status = error instanceof HttpError ? error.status : 500;
    if (!(error instanceof HttpError)) log().error({ web: true, err: error }, "web: a request failed");
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const message = error instanceof HttpError ? error.message : "the dashboard could not answer (see the server log)";
    res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
    res.end(
      html`<!doctype html><title>${status}</title>
        <h1>${status}</h1>
        <p>${redactText(message)}</p>`.text,
    );
  }

  const handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    // Express strips the mount path from req.url and keeps it in req.baseUrl; node:http does not.
    const baseUrl = (req as IncomingMessage & { baseUrl?: string }).baseUrl;
    let path: string;
    let base: string;
    if (baseUrl !== undefined && baseUrl !== "") [path, base] = [pathname, baseUrl];
    else if (prefix === "" || pathname === prefix || pathname.startsWith(`${prefix}/`))
      [path, base] = [pathname.slice(prefix.length) || "/", prefix];
    else {
      if (next) return next();
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    handle(req, res, path, base).catch((error: unknown) => fail(res, error));
  };
  return Object.assign(handler, { stop: () => paced.stop() });
}
