/**
 * SwitchBoard: one worker's cached copy of the kill switches, so the per-job check is a clock read and
 * a Map lookup. The copy is refreshed with one HGETALL when it is older than the refresh interval
 * (`kill_switch_refresh_interval`, 2 s: settings.ts), by the first job that notices; jobs arriving meanwhile wait
 * for that one read. A switch set with tsqctl thus reaches every worker within the interval plus one
 * read. No timer: an idle worker reads nothing and has nothing to stop.
 */
import { performance } from "node:perf_hooks";
import type { Logger } from "../../../platform/logger.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { readSwitches, type KillSwitch } from "./switches.js";

export class SwitchBoard {
  private switches: ReadonlyMap<string, KillSwitch> = new Map();
  /** performance.now() of the last read (ms); -Infinity: never read. */
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly redis: TsqRedis,
    private readonly logger: Logger,
    /** Seconds a read stays fresh. */
    private readonly refreshInterval: number,
  ) {}

  /**
   * The switch that applies to a job of `className` (or of the class it wraps, for ActiveJob). A value
   * when the copy is fresh; a promise only when it must be read again.
   */
  lookup(className: string, wrapped?: string): KillSwitch | undefined | Promise<KillSwitch | undefined> {
    if (performance.now() - this.readAt < this.refreshInterval * 1000) return this.find(className, wrapped);
    return this.refresh().then(() => this.find(className, wrapped));
  }

  private find(className: string, wrapped: string | undefined): KillSwitch | undefined {
    if (this.switches.size === 0) return undefined;
    return this.switches.get(className) ?? (wrapped === undefined ? undefined : this.switches.get(wrapped));
  }

  /** One read shared by every job waiting for it. A failed read keeps the old copy until the next interval. */
  private refresh(): Promise<void> {
    this.reading ??= readSwitches(this.redis)
      .then(
        (switches) => {
          this.switches = switches;
        },
        (error: unknown) => {
          this.logger.warn(
            { error_message: (error as Error).message },
            "could not read kill switches; using the last known ones",
          );
        },
      )
      .finally(() => {
        this.readAt = performance.now();
        this.reading = undefined;
      });
    return this.reading;
  }
}
