/**
 * Structural checks of the shipped deployment files, for the fields each kind must have and for what
 * tsq needs of them (a grace period above -t, the health endpoints, selectors that match). Not a full
 * Kubernetes schema: the fields a mistake would silently break. Each check returns the problems found,
 * so a test can show them all at once.
 */
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

export type Doc = Record<string, unknown>;

/** Every YAML document of a file, failing on a syntax error. */
export function readYamlDocs(path: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path, "utf8"));
  if (!Array.isArray(docs)) throw new Error(`${path}: not a YAML stream`);
  return docs.map((doc, index) => {
    if (doc.errors.length > 0) throw new Error(`${path} document ${index}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Doc;
  });
}

/** `obj` at a dotted path (`spec.template.spec`), or undefined. */
export function at(obj: unknown, path: string): unknown {
  let value: unknown = obj;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function need(problems: string[], doc: Doc, where: string, paths: string[]): void {
  for (const path of paths) if (at(doc, path) === undefined) problems.push(`${where}: ${path} is missing`);
}

const REQUIRED: Record<string, { apiVersion: string; fields: string[] }> = {
  Deployment: {
    apiVersion: "apps/v1",
    fields: ["spec.selector.matchLabels", "spec.template.metadata.labels", "spec.template.spec.containers"],
  },
  Service: { apiVersion: "v1", fields: ["spec.selector", "spec.ports"] },
  PodDisruptionBudget: { apiVersion: "policy/v1", fields: ["spec.selector.matchLabels"] },
  HorizontalPodAutoscaler: {
    apiVersion: "autoscaling/v2",
    fields: ["spec.scaleTargetRef.kind", "spec.scaleTargetRef.name", "spec.maxReplicas", "spec.metrics"],
  },
};

function matches(selector: unknown, labels: unknown): boolean {
  if (!selector || typeof selector !== "object" || !labels || typeof labels !== "object") return false;
  const have = labels as Record<string, unknown>;
  return Object.entries(selector as Record<string, unknown>).every(([key, value]) => have[key] === value);
}

/** The value of `-t`/`--timeout` in an argument list (tsq's default 25 s when absent). */
export function timeoutArg(args: readonly string[]): number {
  const index = args.findIndex((arg) => arg === "-t" || arg === "--timeout");
  return index === -1 ? 25 : Number(args[index + 1]);
}

/** What tsq-cluster allows children after -t before killing them (src/cli/tsqCluster.ts), s. */
export const KILL_AFTER_TIMEOUT_S = 5;

function checkContainer(problems: string[], where: string, container: Doc, grace: unknown): void {
  need(problems, container, where, ["name", "image"]);
  const args = (container.args ?? []) as string[];
  const limit = timeoutArg(args) + KILL_AFTER_TIMEOUT_S;
  if (typeof grace !== "number" || grace <= limit) {
    problems.push(
      `${where}: terminationGracePeriodSeconds (${String(grace)}) must exceed -t + ${KILL_AFTER_TIMEOUT_S} = ${limit}`,
    );
  }
  const ports = ((container.ports ?? []) as Doc[]).map((port) => [port.name, port.containerPort]).flat();
  for (const [probe, path] of [
    ["livenessProbe", "/healthz"],
    ["readinessProbe", "/readyz"],
  ] as const) {
    if (at(container, `${probe}.httpGet.path`) !== path) problems.push(`${where}: ${probe} must GET ${path}`);
    const port = at(container, `${probe}.httpGet.port`);
    if (!ports.includes(port)) problems.push(`${where}: ${probe} port ${String(port)} is not a container port`);
  }
  const metricsPort = args[args.indexOf("--metrics-port") + 1];
  if (!((container.ports ?? []) as Doc[]).some((port) => String(port.containerPort) === metricsPort)) {
    problems.push(`${where}: the container does not expose --metrics-port ${metricsPort}`);
  }
}

/** Problems of a set of Kubernetes documents, checked one by one and against each other. */
export function checkKubernetes(docs: Doc[]): string[] {
  const problems: string[] = [];
  const deployments = docs.filter((doc) => doc.kind === "Deployment");
  for (const doc of docs) {
    const where = `${String(doc.kind)}/${String(at(doc, "metadata.name"))}`;
    const rule = REQUIRED[String(doc.kind)];
    if (!rule) {
      problems.push(`${where}: kind ${String(doc.kind)} is not one the checks know`);
      continue;
    }
    if (doc.apiVersion !== rule.apiVersion) problems.push(`${where}: apiVersion must be ${rule.apiVersion}`);
    need(problems, doc, where, ["metadata.name", ...rule.fields]);
    if (doc.kind === "Deployment") {
      if (!matches(at(doc, "spec.selector.matchLabels"), at(doc, "spec.template.metadata.labels")))
        problems.push(`${where}: spec.selector does not match the pod template's labels`);
      for (const container of (at(doc, "spec.template.spec.containers") ?? []) as Doc[]) {
        checkContainer(
          problems,
          `${where} container ${String(container.name)}`,
          container,
          at(doc, "spec.template.spec.terminationGracePeriodSeconds"),
        );
      }
    }
    const podLabels = deployments.map((d) => at(d, "spec.template.metadata.labels"));
    if (doc.kind === "PodDisruptionBudget") {
      if (at(doc, "spec.minAvailable") === undefined && at(doc, "spec.maxUnavailable") === undefined)
        problems.push(`${where}: needs minAvailable or maxUnavailable`);
      if (!podLabels.some((labels) => matches(at(doc, "spec.selector.matchLabels"), labels)))
        problems.push(`${where}: selects no Deployment's pods`);
    }
    if (doc.kind === "Service" && !podLabels.some((labels) => matches(at(doc, "spec.selector"), labels)))
      problems.push(`${where}: selects no Deployment's pods`);
    if (doc.kind === "HorizontalPodAutoscaler") {
      const target = at(doc, "spec.scaleTargetRef.name");
      if (!deployments.some((d) => at(d, "metadata.name") === target))
        problems.push(`${where}: scales ${String(target)}, which is not shipped`);
      if (Number(at(doc, "spec.minReplicas") ?? 1) > Number(at(doc, "spec.maxReplicas")))
        problems.push(`${where}: minReplicas exceeds maxReplicas`);
      for (const metric of (at(doc, "spec.metrics") ?? []) as Doc[]) {
        const type = String(metric.type);
        const body = metric[type.charAt(0).toLowerCase() + type.slice(1)];
        if (!at(body, "metric.name") || !at(body, "target.type"))
          problems.push(`${where}: a ${type} metric needs metric.name and target.type`);
      }
    }
  }
  return problems;
}

/** Metric names an HPA reads (External and Pods metrics). */
export function hpaMetricNames(docs: Doc[]): string[] {
  return docs
    .filter((doc) => doc.kind === "HorizontalPodAutoscaler")
    .flatMap((doc) => (at(doc, "spec.metrics") ?? []) as Doc[])
    .map((metric) => at(metric, "external.metric.name") ?? at(metric, "pods.metric.name"))
    .filter((name): name is string => typeof name === "string");
}

/** The Dockerfile's instructions as [instruction, rest] pairs (comments and continuations handled). */
export function dockerInstructions(text: string): [string, string][] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const space = line.search(/\s/);
      return [line.slice(0, space).toUpperCase(), line.slice(space + 1).trim()];
    });
}

/** Problems of the Dockerfile: multi-stage, non-root, exec-form tsq-cluster entrypoint. */
export function checkDockerfile(text: string): string[] {
  const problems: string[] = [];
  const steps = dockerInstructions(text);
  const froms = steps.filter(([op]) => op === "FROM");
  if (froms.length < 2) problems.push("not multi-stage: one FROM");
  const lastFrom = steps.map(([op]) => op).lastIndexOf("FROM");
  const final = steps.slice(lastFrom);
  const user = final.filter(([op]) => op === "USER").pop()?.[1];
  if (!user || /^(root|0)(:|$)/.test(user)) problems.push(`the final stage runs as ${user ?? "root (no USER)"}`);
  const entrypoint = final.filter(([op]) => op === "ENTRYPOINT").pop()?.[1];
  if (!entrypoint?.startsWith("["))
    problems.push("ENTRYPOINT is not in exec form: a shell would be PID 1 and swallow TERM");
  else if (!(JSON.parse(entrypoint) as string[]).some((part) => part.endsWith("bin/tsq-cluster.js")))
    problems.push("ENTRYPOINT does not run bin/tsq-cluster.js");
  if (final.some(([op, rest]) => op === "RUN" && /npm (ci|install)(?!.*--omit=dev)/.test(rest)))
    problems.push("the final stage installs packages (dev dependencies belong in the build stage)");
  return problems;
}
