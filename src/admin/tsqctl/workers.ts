/**
 * `tsqctl workers [--json]`: every class of the job module with its worker attributes and the queue its
 * jobs go to, like GitLab's `all_queues.yml`, so a reviewer sees where a new worker will run, and the
 * kill switch (`tsqctl defer|drop`) set on it in Redis, if any. Without Redis the list is still printed,
 * with the switches marked unknown: it is a review tool first.
 *
 *   tsqctl workers -r dist/jobs.js
 *   CLASS                  QUEUE         URGENCY  BOUNDARY  CATEGORY                EXT  IDEMPOTENT  TAGS        WEIGHT  VERSION
 *   PostReceiveWorker      urgent_cpu    high     cpu       source_code_management  no   yes         git_access  1       -
 */
import type { Command } from "commander";
import type { WorkerAttributes } from "../../platform/attributes/attributes.js";
import { generatedQueueName } from "../../platform/attributes/attributes.js";
import type { WorkerRouter } from "../../platform/attributes/WorkerRouter.js";
import { readSwitches, type KillSwitch } from "../../features/flow/kill-switches/switches.js";
import {
  addJsonOption,
  addRedisUrlOption,
  printJson,
  RedisUnavailableError,
  resolveRedisUrl,
  UsageError,
  withRedis,
  type CliIO,
} from "./common.js";
import { duration } from "./format.js";
import { table } from "./format.js";
import { addModuleOptions, loadJobModule, type ModuleFlags } from "./jobModule.js";

interface Flags extends ModuleFlags {
  json?: boolean;
  redisUrl?: string;
}

/** One class as `workers --json` prints it (GitLab all_queues.yml field names, plus tsq's). */
export interface WorkerJson {
  /** The class's name on the wire. */
  name: string;
  /** Where a push that names no queue goes: declared queue, routing rule, namespace, or `default`. */
  queue: string;
  /** GitLab's own queue name for the class (its `name` in queries). */
  generated_queue: string;
  queue_namespace: string | null;
  urgency: string;
  resource_boundary: string;
  feature_category: string | null;
  has_external_dependencies: boolean;
  idempotent: boolean;
  tags: string[];
  weight: number;
  version: number | null;
  /** The kill switch set on the class: "defer 5m", "drop"; null for none; "unknown" when Redis was not reached. */
  kill_switch: string | null;
}

export function workerJson(
  attributes: WorkerAttributes,
  router: WorkerRouter,
  switches?: ReadonlyMap<string, KillSwitch>,
): WorkerJson {
  const set = switches?.get(attributes.workerName);
  return {
    name: attributes.workerName,
    queue: router.queueOf(attributes),
    generated_queue: attributes.declaredQueue ?? generatedQueueName(attributes),
    queue_namespace: attributes.queueNamespace ?? null,
    urgency: attributes.urgency,
    resource_boundary: attributes.resourceBoundary,
    feature_category: attributes.featureCategory ?? null,
    has_external_dependencies: attributes.externalDependencies,
    idempotent: attributes.idempotent,
    tags: [...attributes.tags],
    weight: attributes.weight,
    version: attributes.version ?? null,
    kill_switch:
      switches === undefined
        ? "unknown"
        : set === undefined
          ? null
          : set.action === "drop"
            ? "drop"
            : `defer ${duration(set.delay)}`,
  };
}

/** The switches in Redis, or undefined (said on stderr) when Redis cannot be reached. */
async function switchesOrUnknown(flags: Flags, io: CliIO): Promise<Map<string, KillSwitch> | undefined> {
  try {
    return await withRedis(resolveRedisUrl(flags.redisUrl, io), readSwitches);
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    io.err(`tsqctl workers: kill switches not shown (${error.message})\n`);
    return undefined;
  }
}

async function workers(flags: Flags, io: CliIO): Promise<void> {
  const { registry, router, path } = await loadJobModule(flags, io);
  if (path === undefined) {
    throw new UsageError(
      "no job module: pass -r <path> or set `require:` in config/tsq.yml (or the file given with -C)",
    );
  }
  const switches = await switchesOrUnknown(flags, io);
  const list = registry.names().map((name) => workerJson(registry.attributes(name)!, router, switches));
  if (flags.json) return printJson(io, list);
  if (list.length === 0) return io.out(`the job module ${path} exports no class with a perform() method\n`);
  const yesNo = (value: boolean) => (value ? "yes" : "no");
  const rows = list.map((w) => [
    w.name,
    w.queue,
    w.urgency,
    w.resource_boundary,
    w.feature_category ?? "-",
    yesNo(w.has_external_dependencies),
    yesNo(w.idempotent),
    w.tags.length > 0 ? w.tags.join(",") : "-",
    String(w.weight),
    w.version === null ? "-" : String(w.version),
    w.kill_switch ?? "-",
  ]);
  const headers = [
    "CLASS",
    "QUEUE",
    "URGENCY",
    "BOUNDARY",
    "CATEGORY",
    "EXT",
    "IDEMPOTENT",
    "TAGS",
    "WEIGHT",
    "VERSION",
    "SWITCH",
  ];
  io.out(`${table(headers, rows, new Set([8, 9])).join("\n")}\n`);
}

export function registerWorkers(program: Command, io: CliIO): void {
  const command = program
    .command("workers")
    .description("list the job module's classes with their attributes and the queue their jobs go to");
  addRedisUrlOption(addJsonOption(addModuleOptions(command))).action((flags: Flags) => workers(flags, io));
}
