/**
 * Each Client announces what its plug-ins decide about its own pushes on `client.events`: two clients
 * in one process count apart, and nothing is announced process-wide.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../src/client/Client.js";
import { builtinPlugins } from "../../src/plugins.js";
import { useRedis } from "../helpers/redis.js";
import { UniqueJob } from "../jobs/uniqueJobs.js";
import { UntilExecutedJob } from "../jobs/dedupJobs.js";

const handle = useRedis();
const clients: Client[] = [];
after(() => Promise.all(clients.map((c) => c.close())));

function client(): { client: Client; seen: string[] } {
  const made = new Client({ redis: handle.url, plugins: builtinPlugins() });
  clients.push(made);
  const seen: string[] = [];
  made.events.on("uniqueRejected", (job, queue, holder) => seen.push(`unique ${job.class} ${queue} ${holder}`));
  made.events.on("deduplicated", (job, queue, holder) => seen.push(`dedup ${job.class} ${queue} ${holder}`));
  return { client: made, seen };
}

test("a refused or deduplicated push is announced on the client that made it, and only there", async () => {
  const a = client();
  const b = client();
  const first = await a.client.push({ class: UniqueJob, args: [1] });
  assert.ok(first);
  assert.equal(await b.client.push({ class: UniqueJob, args: [1] }), null, "b's duplicate push is refused");
  assert.deepEqual(a.seen, [], "a pushed nothing refused");
  assert.deepEqual(b.seen, [`unique UniqueJob default ${first}`]);

  const kept = await b.client.push({ class: UntilExecutedJob, args: ["x"] });
  assert.ok(kept);
  const dropped = await a.client.push({ class: UntilExecutedJob, args: ["x"] });
  assert.equal(dropped, kept, "a's duplicate resolves to the holder's jid");
  assert.deepEqual(a.seen, [`dedup UntilExecutedJob ${await queueOf(kept)} ${kept}`]);
  assert.equal(b.seen.length, 1, "b saw only its own refusal");
});

async function queueOf(jid: string): Promise<string> {
  for (const key of await handle.redis.keys("queue:*"))
    for (const job of await handle.redis.lrange(key, 0, -1))
      if ((JSON.parse(job) as { jid: string }).jid === jid) return key.slice("queue:".length);
  throw new Error(`job ${jid} is in no queue`);
}
