/**
 * CommonJS dependencies loaded where they are first used rather than when tsq is imported. yaml,
 * cron-parser (with Luxon) and prom-client (with @opentelemetry/api) are about 200 of the 500 files a
 * `tsq-cluster` start used to open, and 0.15 s of its 0.6 s of CPU; a process without a config file,
 * a cron schedule or a metrics endpoint never needs them. Node's module cache makes every later call a
 * lookup.
 */
import { createRequire } from "node:module";

/** `require` from tsq's own location: `loadDependency("yaml") as typeof import("yaml")`. */
export const loadDependency = createRequire(import.meta.url);
