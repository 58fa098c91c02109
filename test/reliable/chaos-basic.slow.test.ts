/** BasicFetch under the same chaos loses jobs: the chaos test can fail. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { chaos } from "./chaosRun.js";

const handle = useRedis();

test("basic fetch: the same chaos loses jobs (proving the test can fail)", async () => {
  const { jids, done, kills } = await chaos(handle, "basic");
  const seen = new Set(done);
  const lost = jids.filter((jid) => !seen.has(jid)).length;
  console.log(`basic: ${kills} children SIGKILLed; ${lost} jobs lost`);
  assert.ok(lost > 0, "BasicFetch was expected to lose the jobs of killed children");
});
