/** Reliable fetch under chaos: nothing is lost. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { chaos } from "./chaosRun.js";

const handle = useRedis();

test("reliable fetch: 20,000 jobs, a child SIGKILLed every 3,000 done: every job completes at least once", async () => {
  const { jids, done, kills } = await chaos(handle, "reliable");
  const seen = new Set(done);
  const missing = jids.filter((jid) => !seen.has(jid));
  console.log(`reliable: ${kills} children SIGKILLed; ${missing.length} lost; ${done.length - seen.size} ran twice`);
  assert.ok(kills >= 3, `only ${kills} kills: the run was too short to prove anything`);
  assert.deepEqual(missing, []);
});
