/**
 * What a page or an action gets (the request, the Redis connection, who asked, the CSRF token and
 * nonce for the page it renders) and what it returns. Routes never write to the response themselves,
 * except the live stream.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Redis } from "ioredis";
import type { Html } from "./html.js";
import type { PacedRetries } from "./PacedRetries.js";

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  redis: Redis;
  /**
   * The prefix of every link and form: where the dashboard is mounted ("" at the root), plus
   * `/shards/<name>` on a shard other than the default one.
   */
  base: string;
  /** The shard this request looks at, and every shard's name (empty without shards). */
  shard: string;
  shards: readonly string[];
  /** Where the dashboard is mounted, whatever the shard ("" at the root). */
  rootBase: string;
  query: URLSearchParams;
  /** Path parameters, decoded. */
  params: string[];
  /** The parsed form of a POST ({} for a GET). Repeated fields (`key`) keep every value. */
  form: URLSearchParams;
  readOnly: boolean;
  /** The authenticated user name ("anonymous" without auth), for the audit log. */
  user: string;
  csrfToken: string;
  nonce: string;
  /** This handler's background paced retries. */
  paced: PacedRetries;
  /** Logs one audit line: who did what to how many. */
  audit(action: string, target: string, count: number): void;
}

export type RouteResult =
  | { kind: "page"; title: string; body: Html; status?: number }
  | { kind: "json"; value: unknown }
  | { kind: "redirect"; location: string }
  /** The route wrote the response itself (the live stream). */
  | { kind: "done" };

export type Route = (ctx: RequestContext) => Promise<RouteResult>;

export function page(title: string, body: Html, status?: number): RouteResult {
  return { kind: "page", title, body, status };
}

export function redirect(location: string): RouteResult {
  return { kind: "redirect", location };
}

export function json(value: unknown): RouteResult {
  return { kind: "json", value };
}

/** A request the dashboard refuses with a message (404 unknown entry, 400 bad input, 403 read-only). */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A whole number from the query string within [min, max], else the fallback. */
export function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const text = query.get(name);
  if (text === null || !/^\d+$/.test(text)) return fallback;
  return Math.min(Math.max(Number(text), min), max);
}
