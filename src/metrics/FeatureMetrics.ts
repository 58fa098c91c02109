/**
 * FeatureMetrics: the metrics seam (MetricsSeam, src/server/hooks.ts) as one worker's JobMetrics gives
 * it to its plug-ins. Each plug-in's `metrics` is called once; its counters are change-tracked families
 * (series.ts) rendered and sent with the core's, its listeners are removed by `stop()`.
 *
 * A counter's name is unique in the worker: a second plug-in of one feature asking for the same name and
 * help shares the family (keyed rate limits and OverLimit reschedules count into tsq_limited_jobs_total);
 * another help, or a core metric's name, is a mistake and throws as the worker's metrics are built.
 */
import type { EventEmitter } from "node:events";
import type * as PromClient from "prom-client";
import type { ClientEventBus, ClientEvents } from "../client/events.js";
import type { JobEvents, MetricsSeam, PluginMetrics } from "../server/hooks.js";
import { displayClass, type JobPayload } from "../wire/payload.js";
import type { LabelCap } from "./LabelCap.js";
import { CounterFamily } from "./series.js";

export interface FeatureMetricsContext {
  readonly events: EventEmitter<JobEvents>;
  readonly clientEvents: ClientEventBus | undefined;
  readonly cap: LabelCap;
  readonly registry: PromClient.Registry;
  readonly prom: typeof PromClient;
  /** Names the core's own metrics use: a plug-in may not take them. */
  readonly reserved: ReadonlySet<string>;
}

// The emitters' `on`/`off` as one signature, for listeners kept to be removed: each was added through
// the seam's typed onJob/onClient, so its event and arguments match.
type Listener = (...args: never) => void;
type Emitter = { off(event: string, listener: Listener): unknown };

export class FeatureMetrics implements MetricsSeam {
  private readonly families = new Map<string, CounterFamily>();
  private readonly listening: { emitter: Emitter; event: string; listener: Listener }[] = [];
  readonly registry: PromClient.Registry;
  readonly prom: typeof PromClient;

  constructor(
    private readonly ctx: FeatureMetricsContext,
    plugins: readonly PluginMetrics[],
  ) {
    this.registry = ctx.registry;
    this.prom = ctx.prom;
    for (const plugin of plugins) plugin.metrics?.(this);
  }

  counter(name: string, help: string): CounterFamily {
    if (this.ctx.reserved.has(name)) throw new TypeError(`metrics: ${name} is one of tsq's own metrics`);
    const known = this.families.get(name);
    if (known && known.help !== help)
      throw new TypeError(`metrics: ${name} is declared twice with different help texts ("${known.help}", "${help}")`);
    if (known) return known;
    const family = new CounterFamily(name, help);
    this.families.set(name, family);
    return family;
  }

  labels(job: JobPayload, rawQueue: string): { queue: string; class: string } {
    return { queue: this.ctx.cap.value("queue", rawQueue), class: this.ctx.cap.value("class", displayClass(job)) };
  }

  onJob<K extends keyof JobEvents>(event: K, listener: (...args: JobEvents[K]) => void): void {
    this.listen(this.ctx.events, event, listener);
  }

  onClient<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): void {
    if (this.ctx.clientEvents) this.listen(this.ctx.clientEvents, event, listener);
  }

  /** The plug-ins' counters, in the order they were declared. */
  counters(): CounterFamily[] {
    return [...this.families.values()];
  }

  /** Idempotent: removes every listener the plug-ins added. */
  stop(): void {
    for (const { emitter, event, listener } of this.listening.splice(0)) emitter.off(event, listener);
  }

  private listen(emitter: object, event: string, listener: Listener): void {
    const on = emitter as Emitter & { on(event: string, listener: Listener): unknown };
    on.on(event, listener);
    this.listening.push({ emitter: on, event, listener });
  }
}
