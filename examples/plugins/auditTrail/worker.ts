/** An app's worker with the audit trail: after the built-in features, its setting a typed worker option. */
import { Worker, builtinPlugins, type WorkerConfig } from "tsq";
import { auditTrail, type AuditTrail } from "./plugin.js";

export function auditedWorker(redis: string, jobs: WorkerConfig["jobs"], audit: AuditTrail = auditTrail()): Worker {
  return new Worker({ redis, jobs, plugins: [...builtinPlugins(), audit], options: { auditTrailMaxLength: 2 } });
}
