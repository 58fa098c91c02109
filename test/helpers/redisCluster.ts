/**
 * A real Redis Cluster on loopback for cluster-mode tests: six `redis-server --cluster-enabled yes`
 * nodes (3 masters, 3 replicas) joined by `redis-cli --cluster create --cluster-replicas 1`, each on a
 * free port from the test range with its bus port picked the same way (not port + 10000, which would
 * land in the kernel's ephemeral range), each in a private temporary directory. Stopped after the file.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { Redis } from "ioredis";
import { Client as ClientClass, type Client } from "../../src/client/Client.js";
import { scratchDir } from "./fixtures.js";
import { freePort } from "./redis.js";
import { giveUpAfter } from "./timing.js";
import { eventually } from "./tsqProcess.js";

export interface ClusterNode {
  port: number;
  child: ChildProcess;
}

export interface RedisClusterSetup {
  nodes: ClusterNode[];
  /** redis+cluster://127.0.0.1:p1,127.0.0.1:p2,... (every node; rediss+cluster:// for a TLS cluster). */
  url: string;
  /** A plain (non-cluster) connection to one node, for assertions; closed after the file. */
  node(port: number): Redis;
  /** The port of the master serving `slot` now (asked of a live node). */
  masterOf(slot: number): Promise<number>;
  /** The ports of the current masters. */
  masters(): Promise<number[]>;
  /** The port of the replica of master `port` (from CLUSTER NODES of a live node). */
  replicaOf(port: number): Promise<number | undefined>;
  /** The cluster node id of node `port` (CLUSTER MYID). */
  nodeId(port: number): Promise<string>;
  /** Kills node `port` with `signal` (SIGKILL: no chance to hand over anything). */
  kill(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** Kills every node and removes their directory. */
  stop(): Promise<void>;
  /** Runs `redis-cli --cluster <args>` against a live node; its output. */
  cli(args: string[]): Promise<{ code: number; out: string }>;
}

/** ms a master may be unreachable before the others fail it over (Redis' default is 15 s). */
const NODE_TIMEOUT_MS = 2000;

/**
 * A TLS cluster's certificates (test/helpers/tlsRedis.ts makeCertificates): every node speaks only TLS,
 * to clients, to its replicas and on the cluster bus.
 */
export interface ClusterTls {
  /** The folder holding ca.pem, server.pem and server.key. */
  dir: string;
}

function tlsNodeArgs(port: number, tls: ClusterTls | undefined): string[] {
  if (tls === undefined) return ["--port", String(port)];
  return [
    "--port",
    "0",
    "--tls-port",
    String(port),
    "--tls-cluster",
    "yes",
    "--tls-replication",
    "yes",
    "--tls-cert-file",
    join(tls.dir, "server.pem"),
    "--tls-key-file",
    join(tls.dir, "server.key"),
    "--tls-ca-cert-file",
    join(tls.dir, "ca.pem"),
    // Clients prove themselves with a certificate if they have one (tsq's is given in the URL).
    "--tls-auth-clients",
    "optional",
  ];
}

/** redis-cli's options for a TLS cluster (it connects as the server, with the server's certificate). */
function tlsCliArgs(tls: ClusterTls | undefined): string[] {
  if (tls === undefined) return [];
  return [
    "--tls",
    "--cacert",
    join(tls.dir, "ca.pem"),
    "--cert",
    join(tls.dir, "server.pem"),
    "--key",
    join(tls.dir, "server.key"),
  ];
}

function startNode(port: number, busPort: number, dir: string, tls: ClusterTls | undefined): ClusterNode {
  const child = spawn(
    "redis-server",
    [
      ...tlsNodeArgs(port, tls),
      "--cluster-port",
      String(busPort),
      "--bind",
      "127.0.0.1",
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      join(dir, `nodes-${port}.conf`),
      "--cluster-node-timeout",
      String(NODE_TIMEOUT_MS),
      // A slot group whose master and replicas are all gone leaves its slots uncovered; with the default
      // (yes) every other group would stop too (docs/redis-connections.md recommends no).
      "--cluster-require-full-coverage",
      "no",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    { stdio: ["ignore", "ignore", "ignore"] },
  );
  return { port, child };
}

function run(command: string, args: string[], timeoutMs = giveUpAfter(60_000)): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/** Parsed CLUSTER NODES: port, role, master id, own id, slot ranges, failed flag. */
interface NodeLine {
  id: string;
  port: number;
  master: boolean;
  masterId: string;
  failed: boolean;
  slots: [number, number][];
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id, address, flags, masterId, , , , , ...slots] = line.split(" ");
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1]),
        master: flags!.includes("master"),
        masterId: masterId!,
        // "fail?" (suspected) counts too: a test waits for a master the others can reach.
        failed: flags!.includes("fail"),
        slots: slots
          .filter((range) => !range.startsWith("["))
          .map((range) => {
            const [from, to] = range.split("-");
            return [Number(from), Number(to ?? from)] as [number, number];
          }),
      };
    });
}

/**
 * Registers file-level hooks: the cluster starts before the file's first test and stops after its last
 * (startRedisCluster called inside a test would stop it after that test). The handle is filled in by
 * `before`.
 */
export function useRedisCluster(): RedisClusterSetup {
  const handle = {} as RedisClusterSetup;
  before(async () => {
    Object.assign(handle, await startRedisCluster());
  });
  after(() => handle.stop?.());
  return handle;
}

/** Starts the cluster (TLS only with `tls`); the caller stops it (`stop`). */
export async function startRedisCluster(tls?: ClusterTls): Promise<RedisClusterSetup> {
  if (spawnSync("redis-server", ["--version"]).error) {
    throw new Error("redis-server is not installed; `apt-get install -y redis-server` (it ships redis-cli too)");
  }
  const dir = mkdtempSync(join(tmpdir(), "tsq-cluster-"));
  const nodes: ClusterNode[] = [];
  const connections: Redis[] = [];
  const stopAll = async (): Promise<void> => {
    for (const connection of connections) connection.disconnect();
    await Promise.all(nodes.map((node) => stop(node.child, "SIGKILL")));
    rmSync(dir, { recursive: true, force: true });
  };
  const ports = new Set<number>();
  const pick = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!ports.has(port)) {
        ports.add(port);
        return port;
      }
    }
  };
  for (let i = 0; i < 6; i++) nodes.push(startNode(await pick(), await pick(), dir, tls));
  const tlsOptions =
    tls === undefined
      ? {}
      : {
          tls: {
            ca: readFileSync(join(tls.dir, "ca.pem")),
            cert: readFileSync(join(tls.dir, "server.pem")),
            key: readFileSync(join(tls.dir, "server.key")),
          },
        };
  const node = (port: number): Redis => {
    const connection = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: null, ...tlsOptions });
    connection.on("error", () => {});
    connections.push(connection);
    return connection;
  };
  const probes = new Map(nodes.map((n) => [n.port, node(n.port)]));
  await eventually(
    async () => {
      for (const n of nodes) {
        if (n.child.exitCode !== null) throw new Error(`cluster node ${n.port} exited with ${n.child.exitCode}`);
        if (
          (await probes
            .get(n.port)!
            .ping()
            .catch(() => "")) !== "PONG"
        )
          return false;
      }
      return true;
    },
    10_000,
    "the cluster nodes did not answer PING",
    50,
  );
  const created = await run("redis-cli", [
    ...tlsCliArgs(tls),
    "--cluster",
    "create",
    ...nodes.map((n) => `127.0.0.1:${n.port}`),
    "--cluster-replicas",
    "1",
    "--cluster-yes",
  ]);
  if (created.code !== 0) {
    await stopAll();
    throw new Error(`redis-cli --cluster create failed:\n${created.out}`);
  }
  const live = (): Redis => {
    const up = nodes.find((n) => n.child.exitCode === null && n.child.signalCode === null);
    if (up === undefined) throw new Error("no cluster node is running");
    return probes.get(up.port)!;
  };
  const clusterNodes = async (): Promise<NodeLine[]> => parseNodes(String(await live().call("CLUSTER", "NODES")));
  // Ready when every node says the cluster is ok and every replica's link to its master is up.
  await eventually(
    async () => {
      for (const n of nodes) {
        const info = String(await probes.get(n.port)!.call("CLUSTER", "INFO"));
        if (!info.includes("cluster_state:ok")) return false;
        const replication = await probes.get(n.port)!.info("replication");
        if (replication.includes("role:slave") && !replication.includes("master_link_status:up")) return false;
      }
      return true;
    },
    30_000,
    "the cluster did not reach cluster_state:ok with every replica in sync",
    100,
  );
  return {
    nodes,
    url: `${tls ? "rediss" : "redis"}+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(",")}`,
    node,
    stop: stopAll,
    async masterOf(slot) {
      const master = (await clusterNodes()).find(
        (line) => line.master && !line.failed && line.slots.some(([from, to]) => slot >= from && slot <= to),
      );
      if (master === undefined) throw new Error(`no master serves slot ${slot}`);
      return master.port;
    },
    async masters() {
      return (await clusterNodes()).filter((line) => line.master && !line.failed).map((line) => line.port);
    },
    async nodeId(port) {
      return String(await probes.get(port)!.call("CLUSTER", "MYID"));
    },
    async replicaOf(port) {
      const lines = await clusterNodes();
      const master = lines.find((line) => line.port === port);
      return lines.find((line) => !line.master && line.masterId === master?.id)?.port;
    },
    async kill(port, signal = "SIGKILL") {
      const target = nodes.find((n) => n.port === port);
      if (target) await stop(target.child, signal);
    },
    cli(args) {
      const up = nodes.find((n) => n.child.exitCode === null && n.child.signalCode === null);
      return run("redis-cli", [
        ...tlsCliArgs(tls),
        "--cluster",
        ...args.map((a) => a.replace("{node}", `127.0.0.1:${up?.port}`)),
      ]);
    },
  };
}

/**
 * A tsq.yml in a scratch folder naming every node of `cluster`, with `extra` YAML after it (a 1 s
 * heartbeat by default, so process records and stats follow a test's steps closely).
 */
export function clusterConfigFile(
  cluster: RedisClusterSetup,
  prefix: string,
  extra = "heartbeat_interval: 1\n",
): string {
  const file = join(scratchDir(prefix), "tsq.yml");
  const nodes = cluster.nodes.map((node) => `"127.0.0.1:${node.port}"`).join(", ");
  writeFileSync(file, `redis: { cluster: [${nodes}] }\n${extra}`);
  return file;
}

/** Pushes `count` ClusterRecordJobs (test/jobs/clusterJobs.ts) sleeping `jobMs` each, 1,000 per round trip. */
export async function pushRecordJobs(client: Client, queue: string, count: number, jobMs: number): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const args = Array.from({ length: Math.min(1000, count - from) }, () => [jobMs]);
    await client.pushBulk({ class: "ClusterRecordJob", queue, args });
  }
}

export interface Pusher {
  /** The jids of the pushes the cluster acknowledged, in order. */
  readonly acknowledged: string[];
  /** Pushes refused or failed (a master away, a slot moving). */
  failed(): number;
  /** Stops pushing; resolves once the last push settled and the client closed. */
  stop(): Promise<void>;
}

/** Pushes one ClusterRecordJob (no sleep) to `queue` every `everyMs` until stopped, on a client of its own. */
export function startPusher(url: string, queue: string, everyMs: number): Pusher {
  const acknowledged: string[] = [];
  let failed = 0;
  let pushing = true;
  const loop = (async () => {
    const own = new ClientClass({ redis: url });
    while (pushing) {
      try {
        const jid = await own.push({ class: "ClusterRecordJob", queue, args: [0] });
        if (jid) acknowledged.push(jid);
      } catch {
        failed++;
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await own.close();
  })();
  return {
    acknowledged,
    failed: () => failed,
    stop: () => {
      pushing = false;
      return loop;
    },
  };
}
