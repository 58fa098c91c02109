/**
 * prom-client, loaded by the first metrics object a process builds: with @opentelemetry/api it is 90
 * files and about 60 ms of CPU at start, which a process serving no /metrics does not pay.
 */
import type * as PromClient from "prom-client";
import { loadDependency } from "../platform/dependency.js";

export function promClient(): typeof PromClient {
  return loadDependency("prom-client") as typeof PromClient;
}
