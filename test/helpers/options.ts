/** WorkerOptions for in-process Launchers in tests: DEFAULTS plus fast timings. */
import { DEFAULTS } from "../../src/platform/config/defaults.js";
import type { QueueSpec, WorkerOptions } from "../../src/platform/config/options.js";

export function testOptions(
  redisUrl: string,
  overrides: Partial<WorkerOptions> & { queues?: QueueSpec[]; concurrency?: number } = {},
): WorkerOptions {
  const { queues, concurrency, ...rest } = overrides;
  return {
    ...DEFAULTS,
    redisUrl,
    require: undefined,
    capsules: [{ name: "default", concurrency: concurrency ?? 5, queues: queues ?? [{ name: "default", weight: 0 }] }],
    tag: "test",
    labels: [],
    environment: "test",
    verbose: false,
    fetch: "basic",
    metricsPort: undefined,
    metricsHost: "127.0.0.1",
    configFile: undefined,
    fetchTimeout: 0.5,
    timeout: 2,
    ...rest,
  };
}
