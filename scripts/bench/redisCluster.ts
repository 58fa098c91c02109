// Redis CPU per job, one redis-server against a Redis Cluster (3 masters + 3 replicas), same jobs, same
// processes, same run; and a projection of the cluster's capacity to 3, 10 and 30 masters.
//
//   npm run bench:cluster [-- --queues 12] [-- --jobs 3000] [-- --repeat 3] [-- --concurrency 10]
//
// `--queues` queues (q0, q1, …), each worked by its own tsq-cluster child (one child per group: on the
// cluster each queue is its own slot group, spread over the masters by its hash tag). The bench pushes
// `--jobs` jobs to every queue at once (pushBulk per queue, in parallel) and waits until all are done;
// each job only INCRs a counter in its own group (CountOnlyJob). Redis CPU is read from INFO cpu
// (used_cpu_sys + used_cpu_user) of every server before and after each round: the single server, or
// the three masters (their replicas' CPU is shown apart: replication costs them, not the masters).
// Rounds alternate the two layouts; each figure is the median.
//
// Projection: a master serves its groups on one core. With groups spread evenly, a cluster of M masters
// runs at most M / (master CPU seconds per job) jobs per second before a master is the limit, where the
// single server's ceiling is 1 / (its CPU seconds per job). It assumes enough groups per master to
// spread evenly (a group's jobs all go to one master: one busy queue caps at one master's core) and
// workers and network enough to feed them; it is an upper bound, not a measurement.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import {
  cleanupAll,
  freePort,
  installCleanupHandlers,
  makeTempDir,
  medianOf,
  messageOf,
  redisCpuSeconds,
  sleep,
  spawnTracked,
  startRedis,
  stopTracked,
  table,
  type PrivateRedis,
} from "./lib.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    queues: { type: "string", default: "12" },
    jobs: { type: "string", default: "3000" },
    repeat: { type: "string", default: "3" },
    concurrency: { type: "string", default: "10" },
  },
});
const QUEUES = Array.from({ length: Number(values.queues) }, (_, i) => `q${i}`);
const JOBS = Number(values.jobs); // per queue
const REPEAT = Number(values.repeat);
const CONCURRENCY = Number(values.concurrency);

type Layout = "single server" | "cluster";

interface Servers {
  single: PrivateRedis;
  masters: Redis[];
  replicas: Redis[];
  clusterUrl: string;
}

async function startCluster(): Promise<Pick<Servers, "masters" | "replicas" | "clusterUrl">> {
  const nodes: PrivateRedis[] = [];
  for (let i = 0; i < 6; i++) {
    const bus = await freePort();
    nodes.push(await startRedis(["--cluster-enabled", "yes", "--cluster-port", String(bus)]));
  }
  const created = spawnSync(
    "redis-cli",
    ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-replicas", "1", "--cluster-yes"],
    { encoding: "utf8" },
  );
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
  const connections = nodes.map((n) => new Redis(n.url));
  for (;;) {
    const states = await Promise.all(connections.map((c) => c.call("CLUSTER", "INFO")));
    const syncing = await Promise.all(connections.map((c) => c.info("replication")));
    if (
      states.every((s) => String(s).includes("cluster_state:ok")) &&
      syncing.every((s) => !s.includes("role:slave") || s.includes("master_link_status:up"))
    )
      break;
    await sleep(100);
  }
  const roles = await Promise.all(connections.map(async (c) => ((await c.call("ROLE")) as unknown[])[0]));
  return {
    masters: connections.filter((_, i) => roles[i] === "master"),
    replicas: connections.filter((_, i) => roles[i] !== "master"),
    clusterUrl: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(",")}`,
  };
}

interface RoundResult {
  jobsPerSecond: number;
  /** Redis CPU µs per job: every master (or the single server), and the replicas. */
  masterUsPerJob: number;
  replicaUsPerJob: number;
  /** The busiest master's share of the masters' CPU. */
  busiestShare: number;
}

async function round(layout: Layout, servers: Servers): Promise<RoundResult> {
  const dir = makeTempDir("tsq-bench-cluster-");
  const top =
    layout === "cluster"
      ? `redis: { cluster: [${servers.clusterUrl
          .replace("redis+cluster://", "")
          .split(",")
          .map((n) => `"${n}"`)
          .join(", ")}] }`
      : `redis_url: ${servers.single.url}`;
  writeFileSync(join(dir, "tsq.yml"), `${top}\nheartbeat_interval: 1\n`);
  const measured = layout === "cluster" ? servers.masters : [new Redis(servers.single.url)];
  if (layout === "single server") await measured[0]!.flushall();
  else for (const master of servers.masters) await master.flushall();
  const cluster = spawnTracked(
    "tsq-cluster",
    process.execPath,
    [
      join(ROOT, "bin/tsq-cluster.js"),
      "-r",
      join(ROOT, "dist/scripts/bench/shardJobs.js"),
      "-C",
      join(dir, "tsq.yml"),
      "-c",
      String(CONCURRENCY),
      ...QUEUES,
    ],
    { env: { ...process.env, REDIS_URL: "redis://127.0.0.1:1/0" } },
  );
  const client = new Client({ redis: layout === "cluster" ? servers.clusterUrl : servers.single.url });
  try {
    // Started: every child has written its process record (one per group).
    const started = performance.now();
    for (;;) {
      let records = 0;
      if (layout === "single server") records = await measured[0]!.scard("processes");
      else for (const queue of QUEUES) records += Number(await client.redisFor(queue).scard("processes"));
      if (records >= QUEUES.length) break;
      if (performance.now() - started > 60_000)
        throw new Error(`the workers did not start: ${cluster.output().tail.join("\n")}`);
      await sleep(100);
    }
    await sleep(1000);
    const cpu0 = await Promise.all(measured.map(redisCpuSeconds));
    const replica0 = await Promise.all(servers.replicas.map(redisCpuSeconds));
    const t0 = performance.now();
    await Promise.all(
      QUEUES.map((queue) =>
        client.pushBulk({ class: "CountOnlyJob", queue, args: Array.from({ length: JOBS }, () => []) }),
      ),
    );
    const total = JOBS * QUEUES.length;
    for (;;) {
      let finished = 0;
      if (layout === "single server") finished = Number(await measured[0]!.get("bench:done"));
      else for (const queue of QUEUES) finished += Number(await client.redisFor(queue).get("bench:done"));
      if (finished >= total) break;
      await sleep(20);
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu1 = await Promise.all(measured.map(redisCpuSeconds));
    const replica1 = await Promise.all(servers.replicas.map(redisCpuSeconds));
    const perServer = cpu1.map((c, i) => c - cpu0[i]!);
    const sum = perServer.reduce((a, b) => a + b, 0);
    const replicaSum = replica1.reduce((a, c, i) => a + c - replica0[i]!, 0);
    return {
      jobsPerSecond: total / seconds,
      masterUsPerJob: (sum / total) * 1e6,
      replicaUsPerJob: (replicaSum / total) * 1e6,
      busiestShare: Math.max(...perServer) / sum,
    };
  } finally {
    await client.close();
    await stopTracked(cluster, { graceMs: 15_000 });
    if (layout === "single server") measured[0]!.disconnect();
  }
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const single = await startRedis();
  process.stderr.write("starting the cluster…\n");
  const servers: Servers = { single, ...(await startCluster()) };
  process.stderr.write(`cluster up: ${servers.clusterUrl}\n`);
  const results = new Map<Layout, RoundResult[]>();
  for (let r = 0; r < REPEAT; r++) {
    for (const layout of (r % 2 === 0 ? ["single server", "cluster"] : ["cluster", "single server"]) as Layout[]) {
      const result = await round(layout, servers);
      results.set(layout, [...(results.get(layout) ?? []), result]);
      process.stderr.write(
        `round ${r + 1}: ${layout}: ${Math.round(result.jobsPerSecond)} jobs/s, ${result.masterUsPerJob.toFixed(1)} µs Redis CPU per job\n`,
      );
    }
  }
  const median = (layout: Layout, pick: (r: RoundResult) => number) => medianOf(results.get(layout)!.map(pick));
  const rows = (["single server", "cluster"] as const).map((layout) => [
    layout === "cluster" ? "cluster, 3 masters (sum of masters)" : "single server",
    Math.round(median(layout, (r) => r.jobsPerSecond)),
    median(layout, (r) => r.masterUsPerJob).toFixed(1),
    layout === "cluster" ? median(layout, (r) => r.replicaUsPerJob).toFixed(1) : "-",
    layout === "cluster" ? `${Math.round(100 * median(layout, (r) => r.busiestShare))}%` : "100%",
  ]);
  const singleUs = median("single server", (r) => r.masterUsPerJob);
  const clusterUs = median("cluster", (r) => r.masterUsPerJob);
  const projection = [1, 3, 10, 30].map((masters) => [
    masters === 1 ? "1 (single server)" : String(masters),
    Math.round((masters === 1 ? 1 / singleUs : masters / clusterUs) * 1e6),
  ]);
  process.stdout.write(
    `${QUEUES.length} queues × ${JOBS} jobs per round (CountOnlyJob), one tsq-cluster child per queue × concurrency ${CONCURRENCY}, median of ${REPEAT}\n` +
      `${table(["layout", "jobs/s", "Redis CPU µs/job (masters)", "replicas µs/job", "busiest master"], rows)}\n\n` +
      `Projection (upper bound: groups spread evenly, one core per master, workers enough):\n` +
      `${table(["masters", "jobs/s before a master's core is full"], projection)}\n`,
  );
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:cluster failed: ${messageOf(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
