/**
 * Workflows with a real tsq worker: a chain with a fan-out/fan-in stage hands results on, and a step
 * that dies for good leads to the terminal state its policy names (the tests wait for that state: a
 * workflow never waits forever).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import {
  Workflow,
  workflow,
  type FailurePolicy,
  type WorkflowStatus,
} from "../../../../src/features/flow/batches/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";

const handle = useRedis();
const JOBS_MODULE = join(ROOT, "dist/test/jobs/batchJobs.js");

function worker(t: { after(fn: () => unknown): void }): Client {
  const proc = startTsq(["-r", JOBS_MODULE, "-c", "5", "--fetch", "reliable"], {
    REDIS_URL: handle.url,
    TSQ_LOG_LEVEL: "error",
  });
  t.after(() => proc.stop(10_000));
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  return client;
}

async function finished(client: Client, id: string): Promise<WorkflowStatus> {
  return eventually(
    async () => {
      const status = await Workflow.status(id, client);
      return status?.state === "running" ? undefined : status;
    },
    60_000,
    `workflow ${id} reached a terminal state`,
  );
}

// retry: 0 as a push option: the pushing process (this test) does not load PartStep's class options.
const parts = (die: boolean) => [
  { job: "PartStep", args: [1] },
  { job: "PartStep", args: [2, die], options: { retry: 0 } },
  { job: "PartStep", args: [3] },
];

test("fetch -> [3 parts] -> merge: results flow from each stage to the next", async (t) => {
  const client = worker(t);
  const { id } = await workflow([{ job: "FetchStep", args: [5] }, parts(false), "MergeStep"], { client });
  const status = await finished(client, id);
  assert.equal(status.state, "succeeded");
  assert.deepEqual(status.results, { FetchStep: 5, PartStep: 5, "PartStep#2": 10, "PartStep#3": 15, MergeStep: 30 });
  const merged = (await handle.redis.lrange("merged", 0, -1)).map((m) => JSON.parse(m) as { sum: number });
  assert.deepEqual(
    merged.map((m) => m.sum),
    [30],
    "the merge ran once",
  );
});

const expectations: Record<FailurePolicy, { state: string; merged: number | undefined }> = {
  fail: { state: "failed", merged: undefined },
  ignore: { state: "completed", merged: 5 + 15 },
  continue: { state: "completed", merged: undefined }, // the merge may run before the other parts finish
};

for (const policy of ["fail", "ignore", "continue"] as const) {
  test(`a part dies for good, onChildFailure "${policy}": ${expectations[policy].state}, never stuck`, async (t) => {
    const client = worker(t);
    const { id } = await workflow([{ job: "FetchStep", args: [5] }, parts(true), "MergeStep"], {
      client,
      onChildFailure: policy,
    });
    const status = await finished(client, id);
    assert.equal(status.state, expectations[policy].state);
    assert.equal(status.results["PartStep#2"], undefined, "the dead part has no result");
    const merged = (await handle.redis.lrange("merged", 0, -1)).map((m) => JSON.parse(m) as { sum: number });
    if (policy === "fail") assert.deepEqual(merged, [], "the merge never ran");
    else assert.equal(merged.length, 1, "the merge ran once");
    if (expectations[policy].merged !== undefined) assert.equal(merged[0]!.sum, expectations[policy].merged);
  });
}

test("bad definitions are refused before anything is pushed", async () => {
  const client = new Client({ redis: handle.url });
  try {
    await assert.rejects(workflow([], { client }), /at least one step/);
    await assert.rejects(workflow([[]], { client }), /stage 0 is an empty list/);
    await assert.rejects(
      workflow(["A"], { client, onChildFailure: "retry" as FailurePolicy }),
      /onChildFailure must be one of fail, ignore, continue/,
    );
    await assert.rejects(
      workflow(
        [
          [
            { job: "A", name: "x" },
            { job: "B", name: "x" },
          ],
        ],
        { client },
      ),
      /two steps are named "x"/,
    );
    assert.equal(await handle.redis.dbsize(), 0);
  } finally {
    await client.close();
  }
});
