/** `tsqctl batches`, `tsqctl batch <bid>` and the admin API's BatchSet, over batches made by the client. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../../../helpers/tsqctl.js";
import { Client } from "../../../../src/client/Client.js";
import { Batch } from "../../../../src/features/flow/batches/index.js";
import { applyBatchEvent } from "../../../../src/features/flow/batches/events.js";
import { BatchSet } from "../../../../src/admin/api/index.js";
import { useRedis } from "../../../helpers/redis.js";

const handle = useRedis();

function tsqctl(args: string[]) {
  return runTsqctl(args, { REDIS_URL: handle.url });
}

async function twoBatches(client: Client): Promise<{ done: string; open: string; dead: string }> {
  const make = async (description: string, n: number) => {
    const batch = new Batch({ client, description });
    const jids: string[] = [];
    await batch.jobs(async () => {
      for (let i = 0; i < n; i++) jids.push((await client.push({ class: "Member", args: [i] }))!);
    });
    return { bid: batch.bid, jids };
  };
  const done = await make("all done", 2);
  for (const jid of done.jids) await applyBatchEvent(client.redis, "success", done.bid, jid);
  const open = await make("import <rows>", 3);
  await applyBatchEvent(client.redis, "failure", open.bid, open.jids[0]!, { info: '{"error_class":"Boom"}' });
  await applyBatchEvent(client.redis, "death", open.bid, open.jids[0]!, { info: '{"error_class":"Boom"}' });
  return { done: done.bid, open: open.bid, dead: open.jids[0]! };
}

test("tsqctl batches / batch <bid>, text and --json; an unknown bid exits 1", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const { done, open, dead } = await twoBatches(client);

  const listed = await tsqctl(["batches", "--json"]);
  assert.equal(listed.exitCode, 0, listed.stderr);
  const rows = JSON.parse(String(listed.stdout)) as { bid: string; total: number; pending: number; state: string }[];
  assert.deepEqual(rows.map((r) => r.bid).sort(), [done, open].sort());
  const openRow = rows.find((r) => r.bid === open)!;
  assert.deepEqual([openRow.total, openRow.pending, openRow.state], [3, 3, "dying"]);
  assert.deepEqual(Object.keys(openRow), [
    "bid",
    "description",
    "state",
    "parent",
    "total",
    "children",
    "pending",
    "unrun",
    "failures",
    "dead_jids",
    "failure_info",
    "created_at",
    "complete_at",
    "success_at",
    "death_at",
    "settled_at",
    "expires_at",
  ]);

  const text = await tsqctl(["batches"]);
  assert.match(String(text.stdout), new RegExp(`${open}\\s+dying\\s+3\\s+3\\s+1\\s+1`));
  assert.match(String(text.stdout), new RegExp(`${done}\\s+succeeded\\s+2\\s+0`));

  const one = await tsqctl(["batch", open, "--json"]);
  assert.equal(one.exitCode, 0, one.stderr);
  const status = JSON.parse(String(one.stdout)) as { dead_jids: string[]; failure_info: Record<string, unknown> };
  assert.deepEqual(status.dead_jids, [dead]);
  assert.deepEqual(status.failure_info, { [dead]: { error_class: "Boom" } });
  const shown = await tsqctl(["batch", open]);
  assert.match(String(shown.stdout), /description {2}import <rows>/);
  assert.match(String(shown.stdout), new RegExp(`dead jids +${dead}`));

  const missing = await tsqctl(["batch", "nope"]);
  assert.equal(missing.exitCode, 1);
  assert.match(String(missing.stderr), /no batch nope/);

  const api = new BatchSet(handle.redis);
  assert.equal((await api.list()).length, 2);
  assert.equal((await api.find(done))?.success, true);
  assert.equal(await api.find("nope"), undefined);
});
