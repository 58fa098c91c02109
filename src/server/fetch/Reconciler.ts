/**
 * Reconciler: reliable fetch's answer to a fetch reply lost with its connection. reliable-fetch.lua (or
 * BLMOVE) moves jobs to this process's private list inside Redis; if the connection drops before the
 * reply arrives, Redis has moved them but the process never saw them. A live process's private list is
 * never recovered by others, so those jobs would wait there until the process stops.
 *
 * It keeps the set of jobs the process holds (fetched, and not yet acknowledged-and-written or
 * requeued). After the fetch connection comes back, before the next fetch on that same connection,
 * every private-list entry not held goes back to the front of its queue (reconcile-2.lua). A job whose
 * acknowledgement was lost with the connection goes back too and runs again: reliable fetch is
 * at-least-once, never at-most-once.
 */
import type { Logger } from "../../platform/logger.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { reconcileLua } from "./scripts.js";

/**
 * A fetched job as the reconciler sees it: which private list it came through, its exact bytes, and
 * its place in the reconciler's table while held (-1 when not held).
 */
export interface HeldJob {
  readonly privateKey: string;
  readonly raw: Buffer;
  heldAt: number;
}

export class Reconciler {
  /**
   * The jobs held, each in the slot its `heldAt` names; a slot freed by a release is reused by the next
   * hold. A dense array rather than a Set: a Set whose entries come and go at job rate rehashes its
   * table in V8's old generation; this table stays as long as the most jobs held at once (the slots
   * plus one batch fetched ahead).
   */
  private readonly held: (HeldJob | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  /** Set when the fetch connection closed after having been up; cleared by a successful reconcile. */
  private needed = false;

  /**
   * @param blocking the fetch connection: reconciling on it orders the step before the next fetch
   * @param lists    every (private list, public queue) pair this fetcher moves jobs between
   */
  constructor(
    private readonly blocking: TsqRedis,
    private readonly lists: readonly { privateKey: string; queueKey: string }[],
    private readonly logger: Logger,
  ) {
    let up = blocking.status === "ready";
    blocking.on("ready", () => (up = true));
    blocking.on("close", () => {
      if (up) this.needed = true;
      up = false;
    });
  }

  hold(job: HeldJob): void {
    if (job.heldAt >= 0) return;
    const slot = this.freeSlots.pop() ?? this.held.length;
    this.held[slot] = job;
    job.heldAt = slot;
  }

  release(job: HeldJob): void {
    const slot = job.heldAt;
    if (slot < 0 || this.held[slot] !== job) return;
    this.held[slot] = undefined;
    this.freeSlots.push(slot);
    job.heldAt = -1;
  }

  /** Puts back what a lost reply left behind, if the connection was lost since the last call. */
  async reconcileIfNeeded(): Promise<void> {
    if (!this.needed) return;
    this.needed = false;
    let moved = 0;
    try {
      for (const { privateKey, queueKey } of this.lists) {
        const held = this.held.flatMap((job) => (job?.privateKey === privateKey ? [job.raw] : []));
        moved += await reconcileLua.run(this.blocking, privateKey, queueKey, ...held);
      }
    } catch (error) {
      this.needed = true; // tried again before the next fetch
      throw error;
    }
    if (moved > 0) {
      this.logger.warn(
        { jobs: moved },
        "the fetch connection was lost with jobs on their way to this process; they went back to the front of their queues",
      );
    }
  }
}
