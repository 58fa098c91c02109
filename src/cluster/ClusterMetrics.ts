/**
 * ClusterMetrics: the supervisor's side of /metrics. One scrape is the whole cluster:
 *
 *   supervisor   its own Node process metrics, tsq_cluster_children{group},
 *                tsq_cluster_child_restarts_total{group,reason}, tsq_child_resident_memory_bytes{child},
 *                tsq_concurrency{child}
 *   Redis        queue sizes and latencies, set sizes, processes: read once here (RedisGauges)
 *   children     job metrics summed over every child (labels queue, class), plus each child's Node
 *                process metrics labelled child="<index>"
 *
 * Counters never go backwards (PRODUCT.md). Children push a snapshot every second (ChildReporter) and a
 * scrape asks each for a fresh one; the newest snapshot per child is kept. When a child exits, its last
 * counters and histograms are kept: for DEAD_GRACE_MS they may still grow (a message sent just before
 * the exit may still arrive), then they stay as they are in the merged totals. prom-client's own
 * `clusterMetrics()` does neither: it drops a dead worker's counts, and one hung worker fails the scrape
 * after 5 s (prometheus/client_js #181, #747). Here a scrape waits at most CHILD_WAIT_MS for a child,
 * and not at all for one that is silent or did not answer last time: it serves that child's last snapshot.
 *
 * Children send changes, not everything (ChildReporter), and each is merged as it arrives
 * (MergedSeries): a scrape renders the merge rather than redoing it, so its cost is one pass over the
 * merged series, whatever the number of children. `class` and `queue` are capped again there
 * (LabelCap): each child admits its own first values, so their union could be a multiple of the bound.
 * The plan's queues are admitted first, so a group's own queues are never folded into "other".
 */
import cluster, { type Worker } from "node:cluster";
import type { Counter } from "prom-client";
import { promClient } from "../metrics/promClient.js";
import type { ChildPlan } from "./groups.js";
import { processRssBytes } from "./HealthWatch.js";
import { isFromChild, type ToChild } from "./ipc.js";
import type { Child, RestartReason, Supervisor } from "./Supervisor.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { PluginMetrics } from "../server/hooks.js";
import { PUSH_INTERVAL_MS } from "./ChildReporter.js";
import { LabelCap, type CapLogger } from "../metrics/LabelCap.js";
import { MergedSeries } from "../metrics/MergedSeries.js";
import { familiesOf, mergeFamilies, renderFamilies, MonotonicGuard } from "../metrics/exposition.js";
import { REDIS_WAIT_MS, RedisGauges } from "../metrics/RedisGauges.js";

/** ms a scrape waits for fresh child snapshots, while Redis is read (REDIS_WAIT_MS): it answers well within 2 s. */
const CHILD_WAIT_MS = 1000;
/** ms without any snapshot after which a child counts as busy or hung: its last one is served unasked. */
const SILENT_MS = 3 * PUSH_INTERVAL_MS;
/** ms a dead child's counters may still grow by a late snapshot; after that they are final. */
const DEAD_GRACE_MS = 10_000;
const REASONS: readonly RestartReason[] = ["crash", "memory", "hang", "rolling"];

export interface ClusterMetricsOptions {
  plan: ChildPlan[];
  redis: TsqRedis;
  /** The other shards' connections: their gauges are summed with this one's (queues are each on one). */
  otherShards?: TsqRedis[] | undefined;
  /** Job slots of every capsule but the default one, which each child runs as well. */
  extraConcurrency: number;
  /** Distinct values kept per `class` and `queue` label (metrics_max_label_values). */
  maxLabelValues: number;
  logger?: CapLogger;
  /** The plug-ins the children run: their `gauges` are read from Redis here, once per scrape. */
  plugins: readonly PluginMetrics[];
}

interface Known {
  seq: number;
  /** performance.now() of the last snapshot, and of the child's exit. */
  receivedAt: number;
  diedAt: number | undefined;
  /** Did not answer the last request: not waited for again until it next reports. */
  stalled: boolean;
}

export class ClusterMetrics {
  private readonly registry = new (promClient().Registry)();
  private readonly redisGauges: RedisGauges[];
  /** Every child that has reported, by node:cluster worker id, until DEAD_GRACE_MS after its exit. */
  private readonly known = new Map<number, Known>();
  private readonly merged: MergedSeries;
  private readonly guard = new MonotonicGuard();
  private readonly cap: LabelCap;
  private readonly requests = new Map<number, { pending: Set<number>; done: () => void }>();
  private nextRequest = 0;
  private readonly restarts: Counter<"group" | "reason">;
  private readonly onMessage = (worker: Worker, message: unknown) => this.received(worker, message);
  private readonly onExit = (child: Child) => this.exited(child);
  private readonly onRestart = (group: string, reason: RestartReason) => this.restarts.inc({ group, reason });

  constructor(
    private readonly supervisor: Supervisor,
    private readonly options: ClusterMetricsOptions,
  ) {
    this.cap = new LabelCap(options.maxLabelValues, options.logger).prefer(
      "queue",
      options.plan.flatMap((p) => p.queues.map((q) => q.name)),
    );
    this.merged = new MergedSeries(this.cap);
    this.redisGauges = [options.redis, ...(options.otherShards ?? [])].map(
      (redis) => new RedisGauges(redis, options.plugins, this.cap),
    );
    this.restarts = new (promClient().Counter)({
      name: "tsq_cluster_child_restarts_total",
      help: "Children replaced, by group and reason (crash, memory, hang, rolling).",
      labelNames: ["group", "reason"],
      registers: [this.registry],
    });
    for (const group of this.groups()) for (const reason of REASONS) this.restarts.inc({ group, reason }, 0);
    this.supervisorGauges();
    promClient().collectDefaultMetrics({ register: this.registry });
  }

  start(): void {
    cluster.on("message", this.onMessage);
    this.supervisor.on("exit", this.onExit);
    this.supervisor.on("restart", this.onRestart);
  }

  stop(): void {
    cluster.off("message", this.onMessage);
    this.supervisor.off("exit", this.onExit);
    this.supervisor.off("restart", this.onRestart);
    for (const request of this.requests.values()) request.done();
  }

  /**
   * What one GET /metrics returns. The supervisor's own and the Redis families are read now and merged
   * here (a few hundred series), with those of the children's families that share their names (the
   * process metrics); every other child family is rendered from the running merge.
   */
  async render(): Promise<string> {
    const [own, fromRedis] = await Promise.all([
      familiesOf(this.registry),
      Promise.all(this.redisGauges.map((gauges) => gauges.read(REDIS_WAIT_MS))),
      this.refresh(),
    ]);
    this.foldDead(performance.now());
    const local = [own, ...fromRedis];
    const shared = new Set(local.flatMap((list) => list.map((f) => f.name)).filter((name) => this.merged.has(name)));
    const fromChildren = [...shared].flatMap((name) => this.merged.family(name) ?? []);
    const head = this.guard.apply(this.cap.apply(mergeFamilies([...local, fromChildren])));
    return renderFamilies(head) + this.merged.render(shared);
  }

  /** Asks every child that has been talking for a fresh snapshot; resolves when all answered or after CHILD_WAIT_MS. */
  private refresh(): Promise<void> {
    const now = performance.now();
    const targets = [...this.supervisor.children.values()]
      .map((c) => c.worker)
      .filter((w) => {
        const known = this.known.get(w.id);
        return w.isConnected() && known !== undefined && !known.stalled && now - known.receivedAt < SILENT_MS;
      });
    if (targets.length === 0) return Promise.resolve();
    const id = ++this.nextRequest;
    return new Promise((resolve) => {
      const pending = new Set(targets.map((w) => w.id));
      const done = () => {
        clearTimeout(timer);
        this.requests.delete(id);
        resolve();
      };
      const timer = setTimeout(() => {
        for (const workerId of pending) {
          const known = this.known.get(workerId);
          if (known) known.stalled = true;
        }
        done();
      }, CHILD_WAIT_MS);
      this.requests.set(id, { pending, done });
      const message: ToChild = { type: "metrics", id };
      for (const worker of targets) {
        worker.send(message, (error) => error && this.answered(id, worker.id));
      }
    });
  }

  private received(worker: Worker, message: unknown): void {
    if (!isFromChild(message) || message.type !== "metrics") return;
    let known = this.known.get(worker.id);
    if (!known) {
      // A worker neither live nor recently dead was folded already: counting it again would double it.
      if (!this.supervisor.children.has(worker.id)) return;
      known = { seq: 0, receivedAt: 0, diedAt: undefined, stalled: false };
      this.known.set(worker.id, known);
    }
    if (message.seq > known.seq) {
      this.merged.apply(worker.id, message, known.diedAt === undefined);
      // A delta after a gap (a snapshot dropped before this child was known): what the missed one
      // changed is missing here until a full snapshot arrives. Request id 0 answers no scrape.
      if (!message.full && message.seq !== known.seq + 1 && worker.isConnected()) {
        const ask: ToChild = { type: "metrics", id: 0, full: true };
        worker.send(ask, () => {});
      }
      known.seq = message.seq;
    }
    known.receivedAt = performance.now();
    known.stalled = false;
    if (message.id !== undefined) this.answered(message.id, worker.id);
  }

  private answered(requestId: number, workerId: number): void {
    const request = this.requests.get(requestId);
    if (!request) return;
    request.pending.delete(workerId);
    if (request.pending.size === 0) request.done();
  }

  private exited(child: Child): void {
    const now = performance.now();
    const known = this.known.get(child.worker.id);
    if (known) known.diedAt = now;
    this.merged.retire(child.worker.id);
    for (const id of [...this.requests.keys()]) this.answered(id, child.worker.id);
    this.foldDead(now);
  }

  private foldDead(now: number): void {
    for (const [id, k] of this.known) {
      if (k.diedAt === undefined || now - k.diedAt < DEAD_GRACE_MS) continue;
      this.merged.forget(id);
      this.known.delete(id);
    }
  }

  private groups(): string[] {
    return [...new Set(this.options.plan.map((p) => p.groupLabel))];
  }

  /** Read from the supervisor's own state at collect time, so a dead child's series disappear with it. */
  private supervisorGauges(): void {
    const { supervisor } = this;
    const groups = this.groups();
    const extra = this.options.extraConcurrency;
    const registers = [this.registry];
    new (promClient().Gauge)({
      name: "tsq_cluster_children",
      help: "Live child processes per group (one more while a replacement starts next to the child it replaces).",
      labelNames: ["group"],
      registers,
      collect() {
        for (const group of groups) this.set({ group }, 0);
        for (const child of supervisor.children.values()) this.inc({ group: child.slot.plan.groupLabel });
      },
    });
    new (promClient().Gauge)({
      name: "tsq_child_resident_memory_bytes",
      help: "Resident memory of each child (VmRSS from /proc), in bytes.",
      labelNames: ["child"],
      registers,
      collect() {
        this.reset();
        for (const child of supervisor.children.values()) {
          const rss = child.worker.process.pid === undefined ? undefined : processRssBytes(child.worker.process.pid);
          if (rss !== undefined) this.inc({ child: String(child.slot.plan.index) }, rss);
        }
      },
    });
    new (promClient().Gauge)({
      name: "tsq_concurrency",
      help: "Job slots of each child (all its capsules).",
      labelNames: ["child"],
      registers,
      collect() {
        this.reset();
        for (const child of supervisor.children.values())
          this.inc({ child: String(child.slot.plan.index) }, child.slot.plan.concurrency + extra);
      },
    });
  }
}
