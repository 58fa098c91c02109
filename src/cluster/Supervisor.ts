/**
 * Supervisor: the `tsq-cluster` primary. It never runs jobs. It forks one child per planned slot over
 * node:cluster, relays lifecycle commands to them over IPC, replaces children that crash (back-off
 * 1 s doubling to 30 s, reset after 60 s of stable running), hang or outgrow `--max-memory`, prunes a
 * dead child's records from Redis at once, and gives up, exiting non-zero, when every child fails to
 * boot (a bad deploy must not fork forever).
 *
 *   start()            claim this process's node:cluster primary (one supervisor per process) and fork every child
 *   quiet()            TSTP to every child
 *   stop(timeout?)     TERM to every child; SIGKILL what is left after timeout + 5 s; resolves the exit code
 *   rollingRestart()   USR2: per child, fork the replacement, wait until it heartbeats, stop the old one
 */
import cluster, { type Worker } from "node:cluster";
import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { CHILD_ENV, isFromChild, type ChildSpec, type ToChild } from "./ipc.js";
import { HealthWatch } from "./HealthWatch.js";
import {
  newChild,
  newSlot,
  noteFromChild,
  restartDelay,
  whenReady,
  type Child,
  type RestartReason,
  type Slot,
  type SupervisorOptions,
} from "./fleet.js";
import { makeBatchDir, readBatchFile, removeBatchFiles } from "./batchFile.js";
import { DeadChildren } from "./DeadChildren.js";
import { claimPrimary, releasePrimary } from "./primary.js";
import { childExecArgv } from "../platform/v8Flags.js";

export { childRedis, type Child, type RestartReason, type SupervisorOptions } from "./fleet.js";

/** Seconds past the child timeout before the supervisor SIGKILLs a child that is still stopping. */
const KILL_GRACE = 5;

export interface SupervisorEvents {
  restart: [group: string, reason: RestartReason];
  /** The child wrote its first heartbeat. */
  ready: [child: Child];
  exit: [child: Child, code: number | null, signal: string | null];
}

export class Supervisor extends EventEmitter<SupervisorEvents> {
  readonly children = new Map<number, Child>();
  private readonly slots: Slot[];
  private readonly watch: HealthWatch;
  private stopping: Promise<number> | undefined;
  /** Seconds children get to finish their jobs at stop: the stop's own, else the worker timeout. */
  private stopTimeout: number;
  private readonly onClusterExit = (worker: Worker, code: number | null, signal: string | null) =>
    this.onExit(worker, code, signal);
  private rolling = false;
  private failedExits = 0;
  private batchDir: string | undefined;
  private forks = 0;
  private gaveUp = false;
  private resolveGiveUp: ((code: number) => void) | undefined;
  /** Dead children's records in Redis, pruned at once. */
  private readonly dead: DeadChildren;
  /** Resolves with the exit code when the cluster has stopped (or given up). */
  readonly finished: Promise<number>;

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.slots = options.plan.map(newSlot);
    this.watch = new HealthWatch(this, options);
    this.dead = new DeadChildren(options, () => this.broadcast({ type: "leaderVacant" }));
    this.stopTimeout = options.worker.timeout;
    this.finished = new Promise((resolve) => (this.resolveGiveUp = resolve));
  }

  /** Throws, forking nothing, when another supervisor holds this process's node:cluster primary. */
  start(): void {
    claimPrimary(this);
    try {
      this.batchDir = makeBatchDir();
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        "no private temporary directory for batch files; children report batches over IPC",
      );
    }
    cluster.setupPrimary({
      exec: fileURLToPath(new URL("../cli/childMain.js", import.meta.url)),
      args: [],
      execArgv: childExecArgv(),
    });
    cluster.on("exit", this.onClusterExit);
    for (const slot of this.slots) this.fork(slot);
    this.watch.start();
  }

  quiet(): void {
    this.options.logger.info("quieting every child");
    this.broadcast({ type: "signal", signal: "TSTP" });
  }

  dumpBusy(): void {
    this.broadcast({ type: "signal", signal: "TTIN" });
  }

  /** A second INT: every child requeues its running jobs now. */
  stopNow(): void {
    this.broadcast({ type: "stopNow" });
  }

  /**
   * Idempotent. `timeout`: seconds children get for their running jobs (default: the worker timeout).
   * Resolves 0 when every child exited cleanly, 1 otherwise.
   */
  stop(timeout?: number): Promise<number> {
    if (this.stopping === undefined && timeout !== undefined) this.stopTimeout = timeout;
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Live children that have written their first heartbeat. */
  readyChildren(): Child[] {
    return [...this.children.values()].filter((c) => c.readyAt !== undefined && c.retiring === undefined);
  }

  get expectedChildren(): number {
    return this.slots.length;
  }

  /** Ends a child for `reason` (hang: SIGKILL; memory: graceful) and starts its replacement. */
  retire(child: Child, reason: "hang" | "memory" | "abandoned"): void {
    if (this.stopping || child.retiring) return;
    child.retiring = reason;
    this.emit("restart", child.slot.plan.groupLabel, reason);
    if (reason === "hang") {
      child.worker.process.kill("SIGKILL");
    } else {
      this.send(child, { type: "signal", signal: "TERM" });
      this.fork(child.slot);
    }
  }

  async rollingRestart(): Promise<void> {
    if (this.rolling || this.stopping) return;
    this.rolling = true;
    const log = this.options.logger;
    log.info("rolling restart: replacing children one by one");
    try {
      for (const slot of this.slots) {
        if (this.stopping) break;
        const old = slot.current;
        if (!old) continue;
        old.retiring = "rolling";
        const replacement = this.fork(slot);
        if (!(await whenReady(replacement, 60_000))) {
          log.error(
            { child: slot.plan.index },
            "rolling restart: the replacement did not start; keeping the old child and stopping the roll",
          );
          old.retiring = undefined;
          slot.current = old;
          break;
        }
        this.emit("restart", slot.plan.groupLabel, "rolling");
        const exited = new Promise<void>((resolve) => old.worker.once("exit", () => resolve()));
        this.send(old, { type: "signal", signal: "TERM" });
        await exited;
      }
    } finally {
      this.rolling = false;
    }
    log.info("rolling restart finished");
  }

  private fork(slot: Slot): Child {
    const batchFile =
      this.batchDir === undefined ? undefined : join(this.batchDir, `child-${slot.plan.index}-${++this.forks}`);
    const spec: ChildSpec = { plan: slot.plan, options: this.options.worker, ...(batchFile ? { batchFile } : {}) };
    const worker = cluster.fork({ [CHILD_ENV]: JSON.stringify(spec) });
    const child = newChild(worker, slot, batchFile);
    this.children.set(worker.id, child);
    slot.current = child;
    worker.on("message", (message: unknown) => {
      if (!isFromChild(message)) return;
      const type = noteFromChild(child, message);
      // A child forked just before a stop may have missed the TERM while loading its modules.
      if (type === "identity" && this.stopping) this.send(child, this.termMessage());
      if (type === "ready") this.emit("ready", child);
    });
    // A child that exits before the IPC channel is up still reports through cluster's "exit".
    worker.on("error", (error) => this.options.logger.warn({ err: error, child: slot.plan.index }, "IPC error"));
    return child;
  }

  /** The jobs of the child's latest fetched batch (describeBatch text). */
  lastBatchOf(child: Child): string {
    return child.batchFile ? readBatchFile(child.batchFile) || child.lastBatch : child.lastBatch;
  }

  private onExit(worker: Worker, code: number | null, signal: string | null): void {
    const child = this.children.get(worker.id);
    if (!child) return;
    this.children.delete(worker.id);
    if (child.batchFile) removeBatchFiles(child.batchFile);
    this.emit("exit", child, code, signal);
    this.dead.prune(child);
    const { slot } = child;
    const log = this.options.logger;
    if (this.stopping) {
      if (code !== 0) this.failedExits++;
      return;
    }
    if (child.retiring) {
      if (child.retiring === "hang") this.fork(slot);
      return;
    }
    if (slot.current !== child) return;
    slot.current = undefined;
    const uptime = performance.now() - child.forkedAt;
    log.error(
      {
        child: slot.plan.index,
        group: slot.plan.groupLabel,
        code,
        signal,
        uptime_s: Math.round(uptime / 1000),
        error: child.fatal,
      },
      "child exited unexpectedly",
    );
    this.emit("restart", slot.plan.groupLabel, "crash");
    // A boot failure is a child that ended by itself before its first heartbeat (a broken module, a
    // failing startup hook). One killed by a signal while booting says nothing about the deploy.
    if (child.readyAt === undefined && signal === null) slot.bootFailures++;
    if (this.slots.every((s) => s.bootFailures > 0 && s.current?.readyAt === undefined)) {
      log.fatal(
        { error: child.fatal },
        `every child failed to boot; stopping instead of forking forever. Last error: ${child.fatal ?? `exit ${code ?? signal}`}`,
      );
      this.gaveUp = true;
      void this.stop();
      return;
    }
    const delay = restartDelay(slot, uptime);
    log.info({ child: slot.plan.index, delay_ms: delay }, "restarting child");
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (!this.stopping) this.fork(slot);
    }, delay);
  }

  private async shutdown(): Promise<number> {
    const log = this.options.logger;
    this.watch.stop();
    for (const slot of this.slots) if (slot.restartTimer) clearTimeout(slot.restartTimer);
    const live = [...this.children.values()];
    log.info({ children: live.length, timeout_s: this.stopTimeout }, "stopping every child");
    const exits = live.map(
      (c) => new Promise<void>((resolve) => (c.worker.isDead() ? resolve() : c.worker.once("exit", () => resolve()))),
    );
    this.broadcast(this.termMessage());
    const killer = setTimeout(
      () => {
        for (const child of this.children.values()) {
          log.error(
            { child: child.slot.plan.index, pid: child.worker.process.pid },
            "child still running after timeout + 5 s; SIGKILL",
          );
          child.worker.process.kill("SIGKILL");
        }
      },
      (this.stopTimeout + KILL_GRACE) * 1000,
    );
    await Promise.all(exits);
    clearTimeout(killer);
    cluster.off("exit", this.onClusterExit);
    await this.dead.settled();
    releasePrimary(this);
    if (this.batchDir) removeBatchFiles(this.batchDir);
    const code = this.gaveUp || this.failedExits > 0 ? 1 : 0;
    this.resolveGiveUp?.(code);
    return code;
  }

  private termMessage(): ToChild {
    return { type: "signal", signal: "TERM", timeout: this.stopTimeout };
  }

  private broadcast(message: ToChild): void {
    for (const child of this.children.values()) this.send(child, message);
  }

  private send(child: Child, message: ToChild): void {
    if (child.worker.isConnected()) child.worker.send(message);
  }
}
