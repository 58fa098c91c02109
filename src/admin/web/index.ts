/**
 * `tsq/web`: the dashboard. Mount the handler in any Node server, or run `WebServer` on its own port.
 *
 *   import { createServer } from "node:http";
 *   import { createWebHandler } from "tsq/web";
 *   import { connectRedis } from "tsq/api";
 *   const handler = createWebHandler({ redis: connectRedis(process.env.REDIS_URL!), prefix: "/tsq" });
 *   createServer((req, res) => handler(req, res)).listen(3000, "127.0.0.1");
 */
export { createWebHandler, type WebOptions, type WebHandler } from "./WebApp.js";
export { WebServer, WEB_DEFAULTS, WEB_REDIS_DEADLINE_MS } from "./WebServer.js";
export type { WebAuth } from "./security.js";
