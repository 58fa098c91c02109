/**
 * FleetVersion: the wire formats a Client, and the worker around it, write (timestamps, metrics layout;
 * src/wire/sidekiqVersion.ts). A fixed `sidekiq_version` fixes them; `auto` follows the Ruby Sidekiq
 * processes that share the Redis, read from their heartbeat records:
 *
 *   SMEMBERS processes                       every read (a worker reads once per heartbeat)
 *   HGET <identity> info   -> {"version":"7.3.10",…}   once per identity never seen before
 *
 * An identity's version never changes (a restart is a new identity), so a steady fleet costs one
 * SMEMBERS a beat whatever its size. When the last Ruby process leaves (a deploy, a restart), what was
 * read is kept for RUBY_GONE_GRACE_MS before falling back to the no-Ruby formats, so one slow restart
 * does not flip the formats twice.
 */
import { performance } from "node:perf_hooks";
import type { Redis } from "ioredis";
import { PROCESSES, processKey } from "../wire/keys.js";
import {
  WITHOUT_RUBY,
  fleetFormats,
  initialFormats,
  majorOf,
  rubySidekiqVersionOf,
  type SidekiqVersionSetting,
  type WireFormats,
} from "../wire/sidekiqVersion.js";

/** ms the formats read from Ruby processes outlive the last of them. */
export const RUBY_GONE_GRACE_MS = 5 * 60_000;

/** What a read decided. */
export interface FleetDecision {
  readonly formats: WireFormats;
  /** True when the formats differ from the last read's, or this is the first read. */
  readonly changed: boolean;
  /** Live Ruby Sidekiq processes by version, e.g. `{ "7.3.10": 2 }` (`"6.x"`: 6 publishes none). */
  readonly ruby: Readonly<Record<string, number>>;
}

/** The commands a read needs (a TsqRedis or a plain ioredis client). */
type FleetRedis = Pick<Redis, "smembers" | "pipeline" | "status">;

export class FleetVersion {
  private current: WireFormats;
  private decided = false;
  /** identity -> its Ruby Sidekiq version, or null for a process that is not one (tsq, another port). */
  private readonly versions = new Map<string, string | null>();
  /** Clock ms a Ruby process was last seen live. */
  private rubySeenAt = -Infinity;
  /** Clock ms of the last read that answered. */
  private readAt = -Infinity;
  private reading: Promise<FleetDecision> | undefined;

  constructor(
    readonly setting: SidekiqVersionSetting,
    /** Milliseconds on a clock that never steps back: only differences are used. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.current = initialFormats(setting);
  }

  get formats(): WireFormats {
    return this.current;
  }

  /**
   * Reads the fleet (auto only; a fixed setting reads nothing) and resolves to the decision. Rejects
   * when Redis does: the formats stay as they were.
   */
  read(redis: FleetRedis): Promise<FleetDecision> {
    this.reading ??= this.readOnce(redis).finally(() => (this.reading = undefined));
    return this.reading;
  }

  /**
   * For a Client without a worker to read for it: reads in the background when the last read is older
   * than `maxAgeMs` and Redis is connected; never rejects. Pushes go on with the formats they have.
   */
  readSoon(redis: FleetRedis, maxAgeMs: number, onDecision: (decision: FleetDecision) => void): void {
    if (this.setting !== "auto" || this.reading || redis.status !== "ready") return;
    if (this.now() - this.readAt < maxAgeMs) return;
    this.read(redis).then(
      (decision) => decision.changed && onDecision(decision),
      () => (this.readAt = this.now()), // Redis trouble: the push reports it; try again after maxAgeMs
    );
  }

  private async readOnce(redis: FleetRedis): Promise<FleetDecision> {
    const ruby = this.setting === "auto" ? await this.rubyVersions(redis) : {};
    const now = this.now();
    this.readAt = now;
    const before = this.current;
    if (this.setting === "auto") {
      const live = Object.keys(ruby);
      if (live.length > 0) {
        this.rubySeenAt = now;
        this.current = fleetFormats(live.map(majorOf));
      } else if (now - this.rubySeenAt >= RUBY_GONE_GRACE_MS) {
        this.current = WITHOUT_RUBY;
      }
    }
    const changed = !this.decided || !same(before, this.current);
    this.decided = true;
    return { formats: this.current, changed, ruby };
  }

  /** Live Ruby Sidekiq processes by version: one SMEMBERS, and one HGET per identity not seen before. */
  private async rubyVersions(redis: FleetRedis): Promise<Record<string, number>> {
    const members = new Set(await redis.smembers(PROCESSES));
    for (const identity of this.versions.keys()) if (!members.has(identity)) this.versions.delete(identity);
    const unknown = [...members].filter((identity) => !this.versions.has(identity));
    if (unknown.length > 0) {
      const pipe = redis.pipeline();
      for (const identity of unknown) pipe.hget(processKey(identity), "info");
      const replies = (await pipe.exec()) ?? [];
      unknown.forEach((identity, i) => {
        const [error, info] = replies[i] ?? [null, null];
        if (error) throw error;
        // No record (a process gone, not yet pruned from the set): asked again next time.
        if (typeof info === "string") this.versions.set(identity, rubySidekiqVersionOf(info) ?? null);
      });
    }
    const ruby: Record<string, number> = {};
    for (const version of this.versions.values()) if (version !== null) ruby[version] = (ruby[version] ?? 0) + 1;
    return ruby;
  }
}

/** A decision as a log line: its fields, and a sentence saying what is written and why. */
export function describeDecision(
  setting: SidekiqVersionSetting,
  decision: FleetDecision,
): {
  fields: Record<string, unknown>;
  message: string;
} {
  const { formats, ruby } = decision;
  const written =
    `${formats.timestamps === "milliseconds" ? "integer-millisecond" : "float-second"} timestamps and ` +
    `Sidekiq ${formats.metrics === "sidekiq7" ? "7" : "8"}'s execution-metrics keys`;
  const versions = Object.entries(ruby).map(([version, n]) => `${version} ×${n}`);
  const why =
    setting !== "auto"
      ? `sidekiq_version ${setting}`
      : versions.length > 0
        ? `sidekiq_version auto, Ruby Sidekiq in Redis: ${versions.join(", ")}`
        : "sidekiq_version auto, no Ruby Sidekiq process in Redis";
  return {
    fields: {
      sidekiq_version: setting,
      ruby_sidekiq: ruby,
      timestamps: formats.timestamps,
      metrics_layout: formats.metrics,
    },
    message: `writing ${written} (${why})`,
  };
}

function same(a: WireFormats, b: WireFormats): boolean {
  return a.timestamps === b.timestamps && a.metrics === b.metrics;
}
