/**
 * Shared by the dashboard tests: a dashboard on a free loopback port, a tiny cookie-keeping HTTP
 * client, and Redis contents as tsq and Sidekiq write them, including hostile text in every field a
 * page shows.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import { Client } from "../../../src/client/Client.js";
import {
  DEAD,
  PROCESSES,
  RETRY,
  SCHEDULE,
  STAT_FAILED,
  STAT_PROCESSED,
  processKey,
  workKey,
} from "../../../src/wire/keys.js";
import type { TsqRedis } from "../../../src/platform/redis/connection.js";
import { createWebHandler, type WebOptions } from "../../../src/admin/web/index.js";

/** Text that runs script if any page interpolates it unescaped, or turns it into a link. */
export const HOSTILE = [
  `<script>window.__xss=1</script>`,
  `"><img src=x onerror="window.__xss=2">`,
  "javascript:window.__xss=3",
];
export const HOSTILE_TEXT = HOSTILE.join(" ");

export interface WebHandle {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

export async function startWeb(options: WebOptions): Promise<WebHandle> {
  const handler = createWebHandler(options);
  const server = createServer((req, res) =>
    handler(req, res, () => {
      res.writeHead(418).end("next() called");
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.stop();
    },
  };
}

/** A browser-like client: keeps the CSRF cookie, reads the form token from a page, never follows redirects. */
export class WebSession {
  private cookie = "";
  constructor(
    readonly base: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async get(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string; res: Response }> {
    const res = await fetch(this.base + path, {
      headers: { ...this.headers, cookie: this.cookie, ...headers },
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, body: await res.text(), res };
  }

  /** The authenticity_token on `path`'s page. */
  async token(path = "/retries"): Promise<string> {
    const { body } = await this.get(path);
    const token = /name="authenticity_token" value="([0-9a-f]+)"/.exec(body)?.[1];
    if (!token) throw new Error(`no token on ${path}: ${body.slice(0, 300)}`);
    return token;
  }

  /** POSTs a form as a same-origin browser does (Sec-Fetch-Site: same-origin) unless headers say otherwise. */
  async post(
    path: string,
    fields: [string, string][],
    headers: Record<string, string> = { "sec-fetch-site": "same-origin" },
  ): Promise<{ status: number; body: string; location: string | null }> {
    const res = await fetch(this.base + path, {
      method: "POST",
      headers: {
        ...this.headers,
        cookie: this.cookie,
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, body: await res.text(), location: res.headers.get("location") };
  }

  private keep(res: Response): void {
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0]!;
  }
}

export const jidOf = (prefix: string, i: number) => `${prefix}${String(i).padStart(24 - prefix.length, "0")}`;

/** Counters, queues, the three sets and one process with a running job; hostile text everywhere. */
export async function seed(redis: TsqRedis): Promise<void> {
  const client = new Client({ redis });
  for (let i = 0; i < 30; i++)
    await client.push({ class: "HardJob", args: [i, HOSTILE_TEXT], queue: "default", jid: jidOf("q", i) });
  await client.push({ class: HOSTILE[1]!, args: [HOSTILE[0]], queue: "critical", jid: jidOf("x", 0) });
  const now = Date.now() / 1000;
  const entry = (prefix: string, i: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      class: i === 0 ? HOSTILE[1] : "FailJob",
      args: [i, HOSTILE_TEXT],
      jid: jidOf(prefix, i),
      queue: "default",
      retry: true,
      retry_count: 3,
      error_class: i % 2 ? "Timeout" : "RuntimeError",
      error_message: `${HOSTILE[0]} failed after ${3000 + i} ms`,
      failed_at: now - 60,
      created_at: now - 120,
      ...extra,
    });
  for (let i = 0; i < 6; i++) await redis.zadd(RETRY, (now + 600 + i).toFixed(3), entry("r", i));
  for (let i = 0; i < 4; i++) await redis.zadd(DEAD, (now - 600 - i).toFixed(3), entry("d", i));
  for (let i = 0; i < 3; i++)
    await redis.zadd(
      SCHEDULE,
      (now + 3600 + i).toFixed(3),
      JSON.stringify({ class: "Later", args: [HOSTILE[2]], jid: jidOf("s", i), queue: "default" }),
    );
  await redis.mset(STAT_PROCESSED, "1234", STAT_FAILED, "56");
  await addProcess(redis, "web-host:4242:abcdef012345", HOSTILE[1]!);
}

/** A live process as a heartbeat writes it, with one job running. */
export async function addProcess(redis: Redis, identity: string, tag: string): Promise<void> {
  const now = Date.now() / 1000;
  const info = {
    hostname: "web-host",
    started_at: now - 100,
    pid: 4242,
    tag,
    concurrency: 5,
    queues: ["default", "critical"],
    labels: [HOSTILE[0]],
    identity,
    version: "tsq 0.1.0",
    embedded: false,
  };
  await redis.sadd(PROCESSES, identity);
  await redis.hset(
    processKey(identity),
    "info",
    JSON.stringify(info),
    "busy",
    "1",
    "beat",
    String(now),
    "quiet",
    "false",
    "rss",
    "51200",
    "rtt_us",
    "100",
    "concurrency",
    "5",
  );
  await redis.expire(processKey(identity), 60);
  const payload = JSON.stringify({ class: "RunningJob", args: [HOSTILE_TEXT], jid: jidOf("w", 0), queue: "default" });
  await redis.hset(workKey(identity), "tid1", JSON.stringify({ queue: "default", payload, run_at: now - 5 }));
}
