/**
 * The dashboard on its own port (`tsqctl web`): a node:http server around `createWebHandler`, bound
 * to 127.0.0.1 unless told otherwise, with `start` and an idempotent `stop`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createWebHandler, type WebHandler, type WebOptions } from "./WebApp.js";

export const WEB_DEFAULTS = { port: 9395, host: "127.0.0.1" } as const;

/**
 * Deadline of each Redis command the dashboard's connections send (ms): a shard that is down (or stopped,
 * accepting connections and never answering) gets a 503 page naming it within this, not a page that
 * never loads. Pass it as `commandTimeoutMs` when opening the dashboard's connections.
 */
export const WEB_REDIS_DEADLINE_MS = 5000;

export class WebServer {
  private server: Server | null = null;
  private handler: WebHandler | null = null;

  constructor(private readonly options: WebOptions & { port?: number; host?: string }) {}

  /** Listens; resolves to the address it is reachable at (the port, when 0 was asked for). */
  async start(): Promise<{ host: string; port: number; url: string }> {
    const handler = createWebHandler(this.options);
    this.handler = handler;
    const server = createServer((req, res) => handler(req, res));
    this.server = server;
    const host = this.options.host ?? WEB_DEFAULTS.host;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port ?? WEB_DEFAULTS.port, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const shown = host.includes(":") ? `[${host}]` : host;
    return { host, port, url: `http://${shown}:${port}${this.options.prefix ?? ""}/` };
  }

  /** Stops listening, closes open connections (live streams included) and ends paced retries between batches. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), this.handler?.stop()]);
  }
}
