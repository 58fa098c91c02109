/**
 * The admin API frees the locks of the jobs it removes through the plug-ins' `locks` declarations: an
 * app's own lock kind is released by a delete, a kill and a clear of a set or a queue when the app hands
 * its list; with `markers`, a clear reads only the jobs that contain one; without, every job.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeadSet, Queue, RetrySet } from "../../../src/admin/api/index.js";
import { definePlugin, type Plugin } from "../../../src/server/plugin.js";
import { parsePayload } from "../../../src/wire/payload.js";
import { DEAD, RETRY, queueKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";

const handle = useRedis();

/** A lock kind of the app's own: `hold:<jid>` while a job that carries `hold_me` exists. */
function holdPlugin(markers?: string[]): { plugin: Plugin; seen: string[] } {
  const seen: string[] = [];
  const plugin = definePlugin({
    name: "holds",
    locks: {
      ...(markers ? { markers } : {}),
      async release(redis, stored) {
        for (const item of stored) {
          const job = typeof item === "object" && !Buffer.isBuffer(item) ? item : parsePayload(item.toString());
          seen.push(job.jid);
          if (job.hold_me) await redis.del(`hold:${job.jid}`);
        }
      },
    },
  });
  return { plugin, seen };
}

const job = (jid: string, held: boolean) =>
  JSON.stringify({ class: "HeldJob", queue: "held", args: [], jid, retry: true, ...(held ? { hold_me: true } : {}) });

async function seed(jids: string[], held: (jid: string) => boolean): Promise<void> {
  for (const jid of jids) if (held(jid)) await handle.redis.set(`hold:${jid}`, "1");
}

test("delete, kill and clear of a set free an app plug-in's locks; markers narrow what a clear reads", async () => {
  await handle.redis.flushdb();
  const jids = ["a", "b", "c", "d"];
  const held = (jid: string) => jid !== "d";
  await seed(jids, held);
  for (const [i, jid] of jids.entries()) await handle.redis.zadd(RETRY, 1_800_000_000 + i, job(jid, held(jid)));

  const { plugin, seen } = holdPlugin(["hold_me"]);
  const retries = new RetrySet(handle.redis, { plugins: [plugin] });
  const a = await retries.findJob("a");
  assert.ok(a && (await a.delete()));
  assert.equal(await handle.redis.exists("hold:a"), 0, "a delete freed its hold");
  const b = await retries.findJob("b");
  assert.ok(b && (await b.kill()));
  assert.equal(await handle.redis.exists("hold:b"), 0, "a kill freed its hold");
  seen.length = 0;
  assert.equal(await retries.clear(), 2);
  assert.deepEqual(seen, ["c"], "the clear read only the job with the marker");
  assert.equal(await handle.redis.exists("hold:c"), 0);

  // Without markers, a clear reads every job (here the dead set: b, killed above, and a new d).
  await handle.redis.zadd(DEAD, 1_800_000_010, job("e", false));
  const unmarked = holdPlugin();
  assert.equal(await new DeadSet(handle.redis, { plugins: [unmarked.plugin] }).clear(), 2);
  assert.deepEqual(unmarked.seen.sort(), ["b", "e"]);
});

test("a queue's delete and clear free an app plug-in's locks; the package's list alone does not know them", async () => {
  await handle.redis.flushdb();
  await seed(["q1", "q2", "q3"], () => true);
  for (const jid of ["q1", "q2", "q3"]) await handle.redis.lpush(queueKey("held"), job(jid, true));
  const { plugin } = holdPlugin(["hold_me"]);
  const queue = new Queue(handle.redis, "held", { plugins: [plugin] });
  const [first] = await handle.redis.lrange(queueKey("held"), -1, -1);
  assert.ok(await new Queue(handle.redis, "held").deleteJob(first!), "the package's list: removed ...");
  assert.equal(await handle.redis.exists("hold:q1"), 1, "... but its hold is not a lock it knows");
  assert.equal(await queue.clear(), 2);
  assert.equal(await handle.redis.exists("hold:q2", "hold:q3"), 0, "the clear freed the app's holds");
});

test("without a plug-in that holds locks, a queue's clear removes its jobs unread", async () => {
  await handle.redis.flushdb();
  for (const jid of ["n1", "n2", "n3"]) await handle.redis.lpush(queueKey("plain"), job(jid, true));
  await handle.redis.config("RESETSTAT");
  assert.equal(await new Queue(handle.redis, "plain", { plugins: [] }).clear(), 3);
  const stats = await handle.redis.info("commandstats");
  assert.doesNotMatch(stats, /cmdstat_lrange:/, "no job was read");
  assert.equal(await handle.redis.exists(queueKey("plain")), 0);
});
