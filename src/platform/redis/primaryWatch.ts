/**
 * Following Sentinel failovers, once per process, whatever the number of connections.
 *
 * Sentinel demotes the old primary (and kills its clients, which makes them reconnect to the new one)
 * only when that node next reports itself as primary, about 8 s after the switch. Waiting for that
 * would leave every connection writing to a node whose writes are about to be discarded. So each
 * process subscribes to `+switch-master` on the Sentinels (one connection per Sentinel per process, not
 * per connection) and, on a switch of its master, drops every connection of that URL at once: they
 * reconnect through the Sentinels to the new primary. A connection that lands on any other node after
 * a switch (a Sentinel that has not heard of it yet) is dropped again until it reaches the new one.
 *
 * The move is logged in one line, by whichever notices first: the switch message or a reconnect.
 */
import { Redis } from "ioredis";
import { logger } from "../logger.js";
import type { ParsedRedisUrl } from "./redisUrl.js";

interface Watch {
  masterName: string;
  /** Connections of this URL still open (until their `end`). */
  connections: Set<Redis>;
  /** Subscribers to +switch-master, one per Sentinel. */
  subscribers: Redis[];
  /** Primary address last seen or announced, "host:port". */
  primary: string | undefined;
  /** Set by a switch: connections must reach this address, until `expectedUntil` (ms epoch). */
  expected: string | undefined;
  expectedUntil: number;
}

/** How long after a switch a connection must reach the announced primary, ms: beyond that, a later
 * failover this process missed must not keep connections bouncing. */
const EXPECT_MS = 30_000;

const watches = new Map<string, Watch>();

function normalize(host: string, port: number | string): string {
  return `${host.replace(/^::ffff:/, "")}:${port}`;
}

function addressOf(redis: Redis): string | undefined {
  const stream = (redis as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
  return stream?.remoteAddress ? normalize(stream.remoteAddress, stream.remotePort ?? "?") : undefined;
}

function moved(watch: Watch, address: string): void {
  const previous = watch.primary;
  if (previous === address) return;
  watch.primary = address;
  const log = logger();
  if (previous === undefined) {
    // debug: every process, tsqctl included, would print it at start (and tsqctl --json writes stdout).
    log.debug(
      { master: watch.masterName, primary: address },
      `Sentinel: primary of "${watch.masterName}" is ${address}`,
    );
  } else {
    log.warn(
      { master: watch.masterName, primary: address, previous },
      `Sentinel failover: primary of "${watch.masterName}" moved from ${previous} to ${address}; connections follow it, no restart needed`,
    );
  }
}

function subscribe(watch: Watch, parsed: ParsedRedisUrl): void {
  for (const { host, port } of parsed.sentinels!) {
    const subscriber = new Redis({
      host,
      port,
      ...(parsed.sentinelUsername === undefined ? {} : { username: parsed.sentinelUsername }),
      ...(parsed.sentinelPassword === undefined ? {} : { password: parsed.sentinelPassword }),
      connectionName: "tsq-sentinel-watch",
      // A Sentinel that is down is retried every 1 s at most; the others still report switches.
      retryStrategy: (times) => Math.min(times * 100, 1000),
      maxRetriesPerRequest: null,
    });
    subscriber.on("error", () => {}); // a Sentinel down is normal; the connections ask the others
    subscriber.subscribe("+switch-master").catch(() => undefined);
    subscriber.on("message", (_channel: string, message: string) => {
      // "<master-name> <old-ip> <old-port> <new-ip> <new-port>"
      const [name, , , ip, newPort] = message.split(" ");
      if (name !== watch.masterName || ip === undefined || newPort === undefined) return;
      const address = normalize(ip, newPort);
      if (watch.expected === address) return; // the other Sentinels announce the same switch
      watch.expected = address;
      watch.expectedUntil = Date.now() + EXPECT_MS;
      moved(watch, address);
      for (const connection of watch.connections) {
        if (addressOf(connection) !== address) connection.disconnect(true);
      }
    });
    watch.subscribers.push(subscriber);
  }
}

/** Follows `redis` (a connection of the `redis+sentinel://` URL `parsed`) across failovers. */
export function watchPrimary(redis: Redis, parsed: ParsedRedisUrl): void {
  const sentinels = parsed.sentinels!.map(({ host, port }) => `${host}:${port}`).join(",");
  const key = `${sentinels}/${parsed.masterName!}`;
  let watch = watches.get(key);
  if (!watch) {
    watch = {
      masterName: parsed.masterName!,
      connections: new Set(),
      subscribers: [],
      primary: undefined,
      expected: undefined,
      expectedUntil: 0,
    };
    watches.set(key, watch);
    subscribe(watch, parsed);
  }
  const current = watch;
  current.connections.add(redis);
  redis.on("ready", () => {
    const address = addressOf(redis);
    if (address === undefined) return;
    if (current.expected !== undefined && address !== current.expected && Date.now() < current.expectedUntil) {
      redis.disconnect(true); // reached the old primary through a Sentinel not yet told: try again
      return;
    }
    moved(current, address);
  });
  redis.on("end", () => {
    current.connections.delete(redis);
    if (current.connections.size > 0) return;
    // The last connection closed: so do the subscribers, or they would keep the process alive.
    for (const subscriber of current.subscribers) subscriber.disconnect();
    watches.delete(key);
  });
}
