/**
 * The HTTP endpoints of `tsq-cluster` and `tsq --metrics-port` (PRODUCT.md):
 *
 *   GET /metrics   Prometheus text, the whole cluster in one response
 *   GET /healthz   200 while the process runs and Redis answers PING, else 503
 *   GET /readyz    200 once every planned worker is up and heartbeating, else 503
 *
 * Anything else is 404; a method other than GET or HEAD is 405. node:http only: three fixed routes do
 * not need a framework.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../platform/logger.js";
import { CONTENT_TYPE } from "./exposition.js";

export interface Endpoints {
  metrics(): Promise<string>;
  healthy(): Promise<boolean>;
  ready(): boolean;
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  logger: Logger;
}

export class MetricsServer {
  private server: Server | undefined;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: MetricsServerOptions,
  ) {}

  /**
   * Resolves with the bound port, or undefined if it could not listen: metrics are not worth stopping the
   * workers for, so the error is logged and the process goes on without them.
   */
  start(): Promise<number | undefined> {
    const { port, host, logger } = this.options;
    const server = createServer((req, res) => void this.handle(req, res));
    // Scrapers keep connections open; an idle one must not hold the process open at exit.
    server.keepAliveTimeout = 5000;
    return new Promise((resolve) => {
      server.once("error", (error: NodeJS.ErrnoException) => {
        logger.error(
          { err: error, host, port },
          `could not serve /metrics on ${host}:${port} (${error.code ?? error.message}); running without it. Pick another --metrics-port, or 0 for none`,
        );
        resolve(undefined);
      });
      server.listen(port, host, () => {
        this.server = server;
        const address = server.address();
        const bound = typeof address === "object" && address ? address.port : port;
        logger.info({ host, port: bound }, "serving GET /metrics, /healthz, /readyz");
        resolve(bound);
      });
    });
  }

  /** Idempotent. Closes the listener and every open connection. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD")
      return send(res, req, 405, "only GET and HEAD\n", { Allow: "GET, HEAD" });
    const path = (req.url ?? "/").split("?", 1)[0];
    try {
      switch (path) {
        case "/metrics":
          return send(res, req, 200, await this.endpoints.metrics(), { "Content-Type": CONTENT_TYPE });
        case "/healthz":
          return (await this.endpoints.healthy())
            ? send(res, req, 200, "ok\n")
            : send(res, req, 503, "unhealthy: Redis does not answer, or stopping\n");
        case "/readyz":
          return this.endpoints.ready() ? send(res, req, 200, "ready\n") : send(res, req, 503, "not ready\n");
        default:
          return send(res, req, 404, "not found: try /metrics, /healthz or /readyz\n");
      }
    } catch (error) {
      this.options.logger.error({ err: error, path }, "metrics endpoint failed");
      return send(res, req, 500, "internal error\n");
    }
  }
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(req.method === "HEAD" ? undefined : body);
}
