/**
 * The shipped deployment files, each checked by a tool that runs here: YAML parsing and structural
 * checks of the Kubernetes manifests and the compose file, `promtool check rules` and `promtool check
 * config`, `systemd-analyze verify`, and a smoke run of the image's entrypoint outside a container:
 * ENTRYPOINT + CMD as the Dockerfile gives them, as PID 1 of a fresh PID namespace (unshare) when the
 * machine allows, TERM mid-run, a clean exit and no job lost.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "../../src/index.js";
import { freePort, useRedis } from "../helpers/redis.js";
import { ROOT, TEST_JOBS, eventually } from "../helpers/tsqProcess.js";
import {
  checkDockerfile,
  checkKubernetes,
  dockerInstructions,
  hpaMetricNames,
  readYamlDocs,
  timeoutArg,
  at,
  KILL_AFTER_TIMEOUT_S,
} from "./manifests.js";

const DEPLOY = join(ROOT, "deploy");
const redis = useRedis();

function tool(command: string, args: string[]): { status: number | null; output: string; missing: boolean } {
  const result = spawnSync(command, args, { encoding: "utf8", cwd: ROOT });
  return {
    status: result.status,
    output: `${result.stdout ?? ""}${result.stderr ?? ""}`,
    missing: result.error !== undefined,
  };
}

test("Kubernetes manifests parse and pass the structural checks", () => {
  const docs = readdirSync(join(DEPLOY, "k8s"))
    .filter((file) => file.endsWith(".yaml"))
    .flatMap((file) => readYamlDocs(join(DEPLOY, "k8s", file)));
  assert.deepEqual(docs.map((doc) => doc.kind).sort(), [
    "Deployment",
    "HorizontalPodAutoscaler",
    "PodDisruptionBudget",
    "Service",
  ]);
  assert.deepEqual(checkKubernetes(docs), []);
  // The checks catch what they claim to: a grace period at -t, and a probe on the wrong path.
  const broken = structuredClone(docs);
  const deployment = broken.find((doc) => doc.kind === "Deployment")!;
  (at(deployment, "spec.template.spec") as Record<string, unknown>).terminationGracePeriodSeconds = 25;
  (at(deployment, "spec.template.spec.containers.0.readinessProbe.httpGet") as Record<string, unknown>).path = "/";
  assert.equal(checkKubernetes(broken).length, 2, checkKubernetes(broken).join("\n"));
  assert.deepEqual(hpaMetricNames(docs), ["tsq_queue_latency_seconds"]);
});

test("promtool checks the alert rules and the compose Prometheus config", (t) => {
  const rules = tool("promtool", ["check", "rules", join(DEPLOY, "prometheus/tsq-alerts.yml")]);
  if (rules.missing) return t.skip("promtool is not installed (install the prometheus package)");
  assert.equal(rules.status, 0, rules.output);
  assert.match(rules.output, /SUCCESS: \d+ rules found/);
  const config = tool("promtool", ["check", "config", join(DEPLOY, "prometheus/prometheus.yml")]);
  assert.equal(config.status, 0, config.output);
  // A broken rule fails, so the check above means something.
  const dir = mkdtempSync(join(tmpdir(), "tsq-promtool-"));
  writeFileSync(
    join(dir, "bad.yml"),
    "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: rate(tsq_jobs_failed_total[5m]\n",
  );
  assert.notEqual(tool("promtool", ["check", "rules", join(dir, "bad.yml")]).status, 0);
});

test("systemd-analyze verifies the unit without a warning", (t) => {
  const unit = join(DEPLOY, "systemd/tsq.service");
  const result = tool("systemd-analyze", ["verify", unit]);
  if (result.missing) return t.skip("systemd-analyze is not installed (part of systemd)");
  assert.equal(result.status, 0, result.output);
  assert.equal(result.output.trim(), "", result.output);
  const stop = Number(/^TimeoutStopSec=(\d+)/m.exec(readFileSync(unit, "utf8"))?.[1]);
  const exec = /^ExecStart=(.*)$/m.exec(readFileSync(unit, "utf8"))![1]!.split(/\s+/);
  assert.ok(stop > timeoutArg(exec) + KILL_AFTER_TIMEOUT_S, `TimeoutStopSec ${stop} must exceed -t + 5`);
  // A misspelt key is reported, so the empty output above means something.
  const dir = mkdtempSync(join(tmpdir(), "tsq-systemd-"));
  writeFileSync(join(dir, "tsq.service"), readFileSync(unit, "utf8").replace("KillMode=", "KilMode="));
  assert.match(tool("systemd-analyze", ["verify", join(dir, "tsq.service")]).output, /KilMode/);
});

test("docker-compose.yml: the services, the files it mounts, the grace period", (t) => {
  const [compose] = readYamlDocs(join(DEPLOY, "docker-compose.yml"));
  const services = at(compose, "services") as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(services).sort(), ["grafana", "prometheus", "redis", "tsq"]);
  for (const [name, service] of Object.entries(services)) {
    for (const volume of (service.volumes ?? []) as string[]) {
      const source = volume.split(":")[0]!;
      if (source.startsWith("."))
        assert.ok(existsSync(resolve(DEPLOY, source)), `${name} mounts ${source}, which is missing`);
    }
  }
  const build = services.tsq!.build as { context: string; dockerfile: string };
  assert.ok(existsSync(join(resolve(DEPLOY, build.context), build.dockerfile)));
  const dockerfile = readFileSync(join(DEPLOY, "Dockerfile"), "utf8");
  const cmd = JSON.parse(
    dockerInstructions(dockerfile)
      .filter(([op]) => op === "CMD")
      .pop()![1],
  ) as string[];
  assert.ok(Number.parseInt(String(services.tsq!.stop_grace_period)) > timeoutArg(cmd) + KILL_AFTER_TIMEOUT_S);
  assert.ok(existsSync(join(ROOT, "config/grafana/tsq.json")), "the provisioned dashboard is missing");
  const compose2 = tool("docker", ["compose", "version"]);
  if (compose2.status !== 0) {
    t.diagnostic(
      `docker compose config not run: ${compose2.missing ? "docker is not installed" : "the compose plugin is absent"}`,
    );
    return;
  }
  const config = tool("docker", ["compose", "-f", join(DEPLOY, "docker-compose.yml"), "config", "--quiet"]);
  assert.equal(config.status, 0, config.output);
});

test("Dockerfile: multi-stage, not root, tsq-cluster as the exec-form entrypoint", () => {
  const text = readFileSync(join(DEPLOY, "Dockerfile"), "utf8");
  assert.deepEqual(checkDockerfile(text), []);
  assert.notDeepEqual(checkDockerfile(text.replace("USER node", "USER root")), []);
  for (const [op, rest] of dockerInstructions(text)) {
    if (op !== "COPY" || rest.includes("--from")) continue;
    const source = rest
      .split(/\s+/)
      .filter((part) => !part.startsWith("--"))
      .slice(0, -1);
    for (const path of source) assert.ok(existsSync(join(ROOT, path)), `COPY ${path}: not in the build context`);
  }
});

/** ENTRYPOINT + CMD of the final stage with /app mapped to the repository, the job module and port swapped. */
function entrypointCommand(port: number): { argv: string[]; env: Record<string, string> } {
  const steps = dockerInstructions(readFileSync(join(DEPLOY, "Dockerfile"), "utf8"));
  const final = steps.slice(steps.map(([op]) => op).lastIndexOf("FROM"));
  const last = (op: string) => final.filter(([name]) => name === op).pop()?.[1];
  const workdir = last("WORKDIR")!;
  const map = (part: string) => (part.startsWith(`${workdir}/`) ? join(ROOT, part.slice(workdir.length + 1)) : part);
  const entry = (JSON.parse(last("ENTRYPOINT")!) as string[]).map(map);
  const cmd = (JSON.parse(last("CMD")!) as string[]).map(map);
  // As `docker run tsq -r <your jobs> ...` would: the test's job module, a free port, loopback only.
  cmd[cmd.indexOf("-r") + 1] = TEST_JOBS;
  cmd[cmd.indexOf("--metrics-port") + 1] = String(port);
  cmd[cmd.indexOf("--metrics-host") + 1] = "127.0.0.1";
  const env: Record<string, string> = {};
  for (const [, rest] of final.filter(([op]) => op === "ENV")) {
    for (const match of rest.matchAll(/(\w+)=(\S+)/g)) env[match[1]!] = match[2]!;
  }
  return { argv: [entry[0] === "node" ? process.execPath : entry[0]!, ...entry.slice(1), ...cmd], env };
}

test("smoke run of the entrypoint: ready, TERM mid-run, exit 0, no job lost, children gone", async (t) => {
  const port = await freePort();
  const { argv, env } = entrypointCommand(port);
  const asPid1 = spawnSync("unshare", ["-p", "-f", "--mount-proc", "true"]).status === 0;
  const command = asPid1 ? ["unshare", "-p", "-f", "--mount-proc", ...argv] : argv;
  let output = "";
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { ...process.env, ...env, REDIS_URL: redis.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  t.after(() => {
    // On a failed assertion: KILL what is left (PID 1 of a namespace takes the rest with it).
    const pid1 = Number(tool("pgrep", ["-P", String(child.pid)]).output.trim());
    if (asPid1 && pid1) process.kill(pid1, "SIGKILL");
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const base = `http://127.0.0.1:${port}`;
  await eventually(
    async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200,
    30_000,
    `never ready:\n${output}`,
  );
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
  // The supervisor: PID 1 of its namespace (child of unshare), or the spawned process itself.
  const supervisor = asPid1 ? Number(tool("pgrep", ["-P", String(child.pid)]).output.trim()) : child.pid!;
  const workers = tool("pgrep", ["-P", String(supervisor)])
    .output.trim()
    .split("\n")
    .map(Number)
    .filter(Boolean);
  assert.ok(workers.length >= 1, "no worker children");
  if (asPid1)
    assert.match(
      readFileSync(`/proc/${supervisor}/status`, "utf8"),
      /^NSpid:\s+\d+\s+1$/m,
      "not PID 1 in its namespace",
    );

  const client = new Client({ redis: redis.url });
  const jids = (await client.pushBulk({
    class: "SleepJob",
    args: Array.from({ length: 400 }, () => [0.2]),
  })) as string[];
  await client.close();
  await eventually(async () => (await redis.redis.llen("started")) >= 50, 30_000, `jobs did not start:\n${output}`);
  // Every metric the alert rules and the autoscaler read is served (queue gauges need a known queue).
  const metrics = await (await fetch(`${base}/metrics`)).text();
  // Counters with labels appear at their first event, so a rule's metric is either served now or
  // documented in docs/metrics.md (a typo is neither).
  const rules = readFileSync(join(DEPLOY, "prometheus/tsq-alerts.yml"), "utf8");
  const documented = readFileSync(join(ROOT, "docs/metrics.md"), "utf8");
  for (const name of new Set(rules.match(/tsq_[a-z_]+/g))) {
    const family = name.replace(/_(count|sum|bucket)$/, "");
    const served = new RegExp(`^# TYPE ${family} `, "m").test(metrics);
    assert.ok(served || documented.includes(`\`${family}`), `alert metric ${name} is neither served nor documented`);
  }
  assert.match(metrics, /^# TYPE tsq_queue_latency_seconds /m);

  process.kill(supervisor, "SIGTERM");
  const code = await exited;
  assert.equal(code, 0, output);
  for (const pid of workers)
    assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} outlived the supervisor`);

  const ran = new Set(
    (await redis.redis.lrange("ran", 0, -1)).map((line) => (JSON.parse(line) as { jid: string }).jid),
  );
  const queued = new Set(
    (await redis.redis.lrange("queue:default", 0, -1)).map((job) => (JSON.parse(job) as { jid: string }).jid),
  );
  const lost = jids.filter((jid) => !ran.has(jid) && !queued.has(jid));
  const cut = (await redis.redis.lrange("started", 0, -1)).filter((jid) => !ran.has(jid));
  assert.deepEqual(cut, [], "jobs started before TERM did not finish within -t");
  assert.deepEqual(lost, [], `${lost.length} jobs neither ran nor are queued`);
  console.log(
    `entrypoint smoke (${asPid1 ? "PID 1 in a PID namespace" : "plain process"}): ${ran.size} ran, ${queued.size} left queued by TERM, 0 lost, exit ${code}`,
  );
});
