/**
 * A fetch reply lost with its connection: Redis moved the job to the process's private list, the process
 * never saw it. After the fetch connection comes back, the job goes back to its queue and runs, rather
 * than waiting in the private list until the process stops.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";

const handle = useRedis();

test("a job in a live process's private list that it does not hold runs after its fetch connection is lost", async () => {
  const tsq = startTsq(["-r", TEST_JOBS, "-c", "5", "--fetch", "reliable"], { REDIS_URL: handle.url });
  try {
    const fetchClient = await eventually(
      async () => /id=(\d+) [^\n]*name=tsq-fetch-/.exec(String(await handle.redis.client("LIST")))?.[1],
      15_000,
      "the worker's fetch connection is up",
    );
    const identity = await eventually(async () => (await handle.redis.smembers("processes"))[0], 15_000, "registered");
    // What a fetch whose reply was lost leaves behind: the job in the private list, unknown to the process.
    const lost = JSON.stringify({
      class: "RecordJob",
      args: ["lost"],
      jid: "0123456789abcdef01234567",
      queue: "default",
    });
    const privateList = `queue:sq|${identity}|default`;
    await handle.redis.lpush(privateList, lost);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await handle.redis.llen("ran"), 0, "a job in the private list alone does not run");

    await handle.redis.client("KILL", "ID", fetchClient);
    const ran = await eventually(async () => (await handle.redis.lrange("ran", 0, -1))[0], 15_000, "the lost job ran");
    assert.equal((JSON.parse(ran) as { jid: string }).jid, "0123456789abcdef01234567");
    await eventually(async () => (await handle.redis.llen(privateList)) === 0, 10_000, "the private list is empty");
    assert.ok(
      tsq.lines.some((l) => String(l.msg).startsWith("the fetch connection was lost with jobs on their way")),
      tsq.output().slice(-2000),
    );

    // Jobs the process does hold are not put back: a running job stays in the list, and runs once.
    await handle.redis.del("ran");
    await handle.redis.lpush(
      "queue:default",
      JSON.stringify({ class: "SleepJob", args: [2], jid: "aaaaaaaaaaaaaaaaaaaaaaaa", queue: "default" }),
    );
    await eventually(async () => (await handle.redis.llen("started")) === 1, 10_000, "the sleeping job started");
    const again = /id=(\d+) [^\n]*name=tsq-fetch-/.exec(String(await handle.redis.client("LIST")))?.[1];
    await handle.redis.client("KILL", "ID", again!);
    await eventually(async () => (await handle.redis.llen("ran")) === 1, 15_000, "the sleeping job finished");
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await handle.redis.llen("started"), 1, "the held job was not put back and started again");
    assert.equal(await handle.redis.llen("queue:default"), 0);
  } finally {
    assert.equal(await tsq.stop(), 0);
  }
});
