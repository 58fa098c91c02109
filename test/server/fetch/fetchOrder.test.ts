/**
 * The fetch hook: plug-ins' fetch orders run in list order but where `before`/`after` move them, a cycle
 * is refused when the worker is built, and a real worker takes its jobs in the order the last one
 * returns, with basic and with reliable fetch.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { Job } from "../../../src/client/Job.js";
import { definePlugin, type Plugin } from "../../../src/server/plugin.js";
import { fetchOrderOf, type FetchOrder } from "../../../src/server/fetch/fetchOrder.js";
import type { CapsuleConfig } from "../../../src/platform/config/options.js";
import type { ServerContext } from "../../../src/server/context.js";

const handle = useRedis();

/** A plug-in whose order appends its name to the first queue's, so the chain's order shows in the result. */
function marker(name: string, placement: { before?: string[]; after?: string[] } = {}): Plugin {
  return definePlugin({
    name,
    fetch: { ...placement, order: () => (queues) => [`${queues[0]}>${name}`] },
  });
}

function run(plugins: Plugin[]): string[] | undefined {
  const order = fetchOrderOf(plugins)?.({} as ServerContext)({} as CapsuleConfig);
  return order?.(["q"]);
}

test("fetch orders chain in list order, moved only by before/after; none declared costs nothing", () => {
  assert.equal(fetchOrderOf([definePlugin({ name: "plain" })]), undefined, "no fetch order: the fetchers get none");
  assert.deepEqual(run([marker("a"), marker("b"), marker("c")]), ["q>a>b>c"]);
  assert.deepEqual(run([marker("a", { after: ["c"] }), marker("b"), marker("c")]), ["q>c>a>b"]);
  assert.deepEqual(run([marker("a"), marker("b", { after: ["c"] }), marker("c")]), ["q>a>c>b"]);
  assert.deepEqual(run([marker("a"), marker("b"), marker("c", { before: ["a"] })]), ["q>c>a>b"]);
  assert.deepEqual(run([marker("a", { after: ["not-in-this-worker"] }), marker("b")]), ["q>a>b"]);
  assert.throws(
    () => run([marker("a", { after: ["b"] }), marker("b", { after: ["a"] })]),
    /fetch orders of a → b → a must each come after the next/,
  );
});

test("a plug-in's order for a capsule it does not concern returns undefined and is left out", () => {
  const skipping = definePlugin({ name: "skip", fetch: { order: () => undefined } });
  assert.equal(fetchOrderOf([skipping])?.({} as ServerContext)({} as CapsuleConfig), undefined);
  assert.deepEqual(run([skipping, marker("b")]), ["q>b"]);
});

const ran: string[] = [];
class OrderedJob extends Job {
  perform(label: string): void {
    ran.push(label);
  }
}

/** Reverses Sidekiq's strict order: queue `b` before `a`. */
const reversing = definePlugin({
  name: "reversing",
  fetch: { order: (): FetchOrder => (queues) => queues.reverse() },
});

for (const fetch of ["basic", "reliable"] as const) {
  test(`a worker with ${fetch} fetch takes its jobs in the plug-in's order`, async (t) => {
    ran.length = 0;
    const client = new Client({ redis: handle.url, plugins: [] });
    t.after(() => client.close());
    for (const queue of ["a", "b"])
      for (let i = 0; i < 3; i++) await client.push({ class: OrderedJob, args: [`${queue}${i}`], queue });
    const launcher = testLauncher(handle.url, [OrderedJob], {
      fetch,
      concurrency: 1,
      queues: [
        { name: "a", weight: 0 },
        { name: "b", weight: 0 },
      ],
      plugins: [reversing],
    });
    t.after(() => launcher.stop());
    await launcher.start();
    await eventually(() => Promise.resolve(ran.length === 6), 10_000, `ran ${ran.join(" ")}`);
    assert.deepEqual(ran, ["b0", "b1", "b2", "a0", "a1", "a2"], "strict a, b reversed: every b before any a");
  });
}
