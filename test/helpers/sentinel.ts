/**
 * A Sentinel-managed Redis on loopback for failover tests: a primary, one replica and three
 * `redis-sentinel` processes (quorum 2), each on a free port with a private temporary directory.
 * Everything is stopped after the test file.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { Redis } from "ioredis";
import { freePort, startRedisServer } from "./redis.js";
import { eventually } from "./tsqProcess.js";

export const MASTER_NAME = "tsqmaster";

export interface SentinelSetup {
  primaryPort: number;
  replicaPort: number;
  sentinelPorts: number[];
  /** redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<MASTER_NAME>/0 */
  url: string;
  /** A plain connection to a data node by port (for assertions). */
  node(port: number): Redis;
  /** The primary's port as Sentinel reports it now. */
  currentPrimary(): Promise<number>;
  /** Sends SENTINEL FAILOVER (retried while Sentinel has no good replica yet); resolves when it was accepted. */
  failover(): Promise<void>;
}

function startSentinel(port: number, primaryPort: number, dir: string): ChildProcess {
  const file = join(dir, `sentinel-${port}.conf`);
  // Sentinel rewrites its config file, so each one gets its own, in the private directory.
  writeFileSync(
    file,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 2`,
      // ms without an answer before a node counts as down (2 s), and how long a failover may take (10 s).
      `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
      `sentinel failover-timeout ${MASTER_NAME} 10000`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
      "",
    ].join("\n"),
  );
  const child = spawn("redis-sentinel", [file], { stdio: ["ignore", "ignore", "ignore"] });
  return child;
}

export async function startSentinelSetup(): Promise<SentinelSetup> {
  if (spawnSync("redis-sentinel", ["--version"]).error) {
    throw new Error(
      "redis-sentinel is not installed; install the redis-sentinel package (apt-get install redis-sentinel)",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "tsq-sentinel-"));
  const children: ChildProcess[] = [];
  const connections: Redis[] = [];
  after(async () => {
    for (const connection of connections) connection.disconnect();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  });
  const primary = await startRedisServer(undefined, mkdtempSync(join(dir, "primary-")));
  children.push(primary.child);
  const replica = await startRedisServer(undefined, mkdtempSync(join(dir, "replica-")), [
    "--replicaof",
    "127.0.0.1",
    String(primary.port),
  ]);
  children.push(replica.child);
  const node = (port: number): Redis => {
    const connection = new Redis({ host: "127.0.0.1", port, lazyConnect: false, maxRetriesPerRequest: null });
    connection.on("error", () => {});
    connections.push(connection);
    return connection;
  };
  const replicaConnection = node(replica.port);
  await eventually(
    async () => /master_link_status:up/.test(await replicaConnection.info("replication")),
    20_000,
    "the replica did not finish its first sync",
  );
  const sentinelPorts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    children.push(startSentinel(port, primary.port, dir));
    sentinelPorts.push(port);
  }
  const sentinels = sentinelPorts.map((port) => node(port));
  // Ready when every Sentinel knows the replica and the two other Sentinels (discovered via hello messages).
  await eventually(
    async () => {
      for (const sentinel of sentinels) {
        const replicas = (await sentinel.call("SENTINEL", "REPLICAS", MASTER_NAME).catch(() => [])) as unknown[];
        const peers = (await sentinel.call("SENTINEL", "SENTINELS", MASTER_NAME).catch(() => [])) as unknown[];
        if (replicas.length < 1 || peers.length < 2) return false;
      }
      return true;
    },
    30_000,
    "the Sentinels did not discover the replica and each other",
    200,
  );
  const currentPrimary = async (): Promise<number> => {
    const [, port] = (await sentinels[0]!.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
    return Number(port);
  };
  return {
    primaryPort: primary.port,
    replicaPort: replica.port,
    sentinelPorts,
    url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(",")}/${MASTER_NAME}/0`,
    node,
    currentPrimary,
    async failover() {
      await eventually(
        async () => {
          try {
            return (await sentinels[0]!.call("SENTINEL", "FAILOVER", MASTER_NAME)) === "OK";
          } catch {
            return false; // NOGOODSLAVE or INPROG: Sentinel is not ready for it yet
          }
        },
        20_000,
        "Sentinel did not accept SENTINEL FAILOVER",
        100,
      );
    },
  };
}
