/**
 * A class's keyed `static limit` on a real 4-child tsq-cluster (TenantJob: one running per tenant, at
 * most 2 starts per tenant per second). A hog tenant with 300 jobs of 200 ms is pushed first, then 1,000
 * tenants with 3 jobs each. Shown: every tenant progresses and finishes while the hog is still held back
 * (no starvation behind it), no tenant ever runs two at once, no job is rescheduled and none is handed
 * back more than once (no churn), and no worker slot ever waits on a limiter (sampled from /metrics).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../../helpers/tsqProcess.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/rateLimitJobs.js");
let cluster: TsqProcess | undefined;
after(() => cluster?.stop(10_000));

/** Sum of a metric's samples in a Prometheus text page (0 when absent), and whether it was present. */
function metric(page: string, name: string): { value: number; present: boolean } {
  let value = 0;
  let present = false;
  for (const line of page.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    present = true;
    value += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return { value, present };
}

interface Run {
  tenant: string;
  id: number;
  parked: number;
  overrated: number;
}

test(
  "1,000 tenants behind a hog: all progress, per-key limits hold, no churn, no slot waits",
  { timeout: 180_000 },
  async () => {
    assert.match(handle.url, /^redis:\/\/127\.0\.0\.1:\d+\/0$/, "the private Redis is up");
    const port = await freePort();
    const hogJobs = 300;
    const tenants = 1_000;
    const perTenant = 3;
    const client = new Client({ redis: handle.url });
    try {
      await client.pushBulk({ class: "TenantJob", args: Array.from({ length: hogJobs }, (_, i) => ["hog", i, 200]) });
      const args: unknown[][] = [];
      for (let t = 0; t < tenants; t++) for (let j = 0; j < perTenant; j++) args.push([`t${t}`, j, 20]);
      await client.pushBulk({ class: "TenantJob", args });
    } finally {
      await client.close();
    }
    const startedAt = Date.now();
    cluster = startTsq(
      ["-r", JOBS, "--processes", "4", "-c", "5", "-q", "default", "-t", "5", "--metrics-port", String(port)],
      { REDIS_URL: handle.url },
      "bin/tsq-cluster.js",
    );
    // /metrics every 250 ms while the run lasts: slots waiting inside a limiter, jobs parked on keys.
    let slotWaitsMax = 0;
    let parkedMax = 0;
    let scrapes = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          const page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          const waits = metric(page, "tsq_limit_slots_waiting");
          if (waits.present) {
            scrapes++;
            slotWaitsMax = Math.max(slotWaitsMax, waits.value);
            parkedMax = Math.max(parkedMax, metric(page, "tsq_limit_waiting").value);
          }
        } catch {
          // Not serving yet.
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const tenantRuns = async () =>
      (await handle.redis.lrange("ran:tenant", 0, -1))
        .map((line) => JSON.parse(line) as Run)
        .filter((r) => r.tenant !== "hog");
    try {
      await eventually(
        async () => (await tenantRuns()).length >= tenants * perTenant,
        150_000,
        "every tenant's jobs ran",
        500,
      );
    } catch (error) {
      console.log(cluster.output().slice(-3000));
      throw error;
    } finally {
      sampling = false;
      await sampler;
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const runs = (await handle.redis.lrange("ran:tenant", 0, -1)).map((line) => JSON.parse(line) as Run);
    const hogRan = runs.filter((r) => r.tenant === "hog").length;
    const byTenant = new Map<string, number>();
    for (const r of runs) if (r.tenant !== "hog") byTenant.set(r.tenant, (byTenant.get(r.tenant) ?? 0) + 1);
    const parks = runs.map((r) => r.parked);
    const overrated = runs.reduce((sum, r) => sum + r.overrated, 0);
    const handedBackTwice = runs.filter((r) => r.parked > 1).length;
    console.log(
      `${tenants} tenants x ${perTenant} jobs behind a hog of ${hogJobs}: all done in ${seconds.toFixed(1)} s; ` +
        `hog ran ${hogRan} meanwhile; parks per job: mean ${(parks.reduce((a, b) => a + b, 0) / parks.length).toFixed(2)}, ` +
        `max ${Math.max(...parks)}; reschedules ${overrated}; max parked (tsq_limit_waiting) ${parkedMax}; ` +
        `slots waiting on a limiter, max over ${scrapes} scrapes: ${slotWaitsMax}`,
    );
    assert.equal(byTenant.size, tenants, "every tenant ran");
    assert.ok(
      [...byTenant.values()].every((n) => n === perTenant),
      "every tenant ran all its jobs, each once",
    );
    assert.equal(
      Number((await handle.redis.get("over:tenant")) ?? 0),
      0,
      "no tenant ever had two jobs running at once",
    );
    assert.ok(hogRan >= 1, "the hog progressed too");
    assert.ok(hogRan < hogJobs / 2, `the tenants did not wait behind the hog (it ran ${hogRan} of ${hogJobs})`);
    assert.equal(overrated, 0, "no job was rescheduled");
    assert.equal(Number((await handle.redis.get("tsq:stat:overrated")) ?? 0), 0, "the overrated stat stayed 0");
    assert.equal(handedBackTwice, 0, "no job was parked more than once");
    assert.ok(parkedMax > 0, "jobs were held back (the limits were reached)");
    assert.ok(scrapes >= 3, `the metrics were sampled (${scrapes} scrapes)`);
    assert.equal(slotWaitsMax, 0, "no worker slot ever waited on a limiter");
  },
);
