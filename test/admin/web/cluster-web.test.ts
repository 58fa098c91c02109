/**
 * `tsq-cluster --web-port`: the dashboard beside /metrics, showing the cluster's own children on Busy,
 * with a bearer token from the environment; it stops with the cluster.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { freePort, useRedis } from "../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";

const redis = useRedis();

test("tsq-cluster --web-port serves the dashboard with the cluster's processes on Busy", async () => {
  const [metricsPort, webPort] = [await freePort(), await freePort()];
  const token = "cluster-web-token-123";
  const cluster = startTsq(
    [
      "-r",
      TEST_JOBS,
      "-q",
      "default",
      "--processes",
      "1",
      "--metrics-port",
      String(metricsPort),
      "--web-port",
      String(webPort),
    ],
    { REDIS_URL: redis.url, TSQ_WEB_TOKEN: token, TSQ_LOG_FORMAT: "json" },
    "bin/tsq-cluster.js",
  );
  try {
    const base = `http://127.0.0.1:${webPort}`;
    const busy = await eventually(
      async () => {
        const res = await fetch(`${base}/busy`, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
        const body = res?.status === 200 ? await res.text() : "";
        return /data-identity="[^"]+"/.test(body) ? body : undefined;
      },
      30_000,
      `the dashboard lists the child: ${cluster.output().slice(-2000)}`,
      250,
    );
    assert.match(busy, /<td>default<\/td>/);
    assert.equal((await fetch(`${base}/stats`)).status, 401, "the token is required");
    assert.ok(!cluster.output().includes(token), "the token is never logged");
  } finally {
    assert.equal(await cluster.stop(20_000), 0);
  }
});
