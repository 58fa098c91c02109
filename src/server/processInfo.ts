/** The process record's `info`, with the fields every Sidekiq version's UI reads (see keys.ts). */
import { VERSION } from "../wire/version.js";
import type { ServerContext } from "./context.js";
import { queueMode } from "./fetch/queueOrder.js";

/** `startedAt`: epoch seconds the worker was built. */
export function processInfo(ctx: ServerContext, startedAt: number): Record<string, unknown> {
  const { options, hostname, identity } = ctx;
  const weights = options.capsules.map((c) => Object.fromEntries(c.queues.map((q) => [q.name, q.weight])));
  const capsules = Object.fromEntries(
    options.capsules.map((c, i) => [
      c.name,
      { concurrency: c.concurrency, mode: queueMode(c.queues), weights: weights[i] },
    ]),
  );
  return {
    hostname,
    started_at: startedAt,
    pid: process.pid,
    tag: options.tag,
    concurrency: options.capsules.reduce((sum, c) => sum + c.concurrency, 0),
    queues: [...new Set(options.capsules.flatMap((c) => c.queues.map((q) => q.name)))],
    weights,
    capsules,
    labels: options.labels,
    identity,
    version: `tsq ${VERSION}`,
    embedded: false,
  };
}
