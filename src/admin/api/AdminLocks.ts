/**
 * AdminLocks: how the admin API frees the locks of the jobs it removes (delete, kill, clear), from the
 * `locks` the plug-ins declare (src/server/plugin.ts): the package's list unless it is given one, so an
 * app's own lock kinds are freed when it hands its list to the sets and queues it opens.
 */
import type { Redis } from "ioredis";
import { packagePlugins } from "../../packagePlugins.js";
import { releaseLocksWith, type Plugin, type StoredJobs } from "../../server/plugin.js";

export class AdminLocks {
  private readonly releaseAll: ((redis: Redis, stored: StoredJobs) => Promise<void>) | undefined;
  /**
   * Text every lock-holding job contains, across the plug-ins; undefined when one declares locks but no
   * marker, so a clear must read every job. Empty when no plug-in holds locks.
   */
  readonly markers: readonly string[] | undefined;

  constructor(plugins: readonly Plugin[] = packagePlugins()) {
    const declared = plugins.flatMap((plugin) => plugin.locks ?? []);
    this.releaseAll = releaseLocksWith(plugins);
    this.markers = declared.every((locks) => locks.markers !== undefined)
      ? declared.flatMap((locks) => locks.markers ?? [])
      : undefined;
  }

  /** True when no plug-in of the list holds locks: nothing removed needs reading. */
  get none(): boolean {
    return this.markers !== undefined && this.markers.length === 0;
  }

  /** False when no plug-in's locks can be named by this text: it is not worth keeping for a release. */
  mayHold(text: string | Buffer): boolean {
    if (this.markers === undefined) return true;
    return this.markers.some((marker) => text.includes(marker));
  }

  async release(redis: Redis, stored: StoredJobs): Promise<void> {
    if (this.releaseAll) await this.releaseAll(redis, stored);
  }
}
