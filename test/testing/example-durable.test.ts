import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { DurableJob, signal } from "tsq";
import { inline, fake, disable, clearAll, progressOf } from "tsq/testing";

class ShipOrderJob extends DurableJob {
  static log: string[] = [];
  async perform(orderId: string): Promise<void> {
    const charge = await this.step("charge", () => ({ id: `ch_${orderId}` }));
    this.progress(50, { charged: charge.id });
    const shipment = await this.waitFor<{ carrier: string }>(`shipped:${orderId}`, { timeout: 7 * 86400 });
    await this.sleep(3600); // ends at once in fake and inline modes
    ShipOrderJob.log.push(`${charge.id} via ${shipment.carrier}`);
    this.progress(100);
  }
}

beforeEach(() => {
  ShipOrderJob.log = [];
});
afterEach(() => {
  clearAll();
  disable();
});

test("inline: the job parks at its wait, and the test's signal runs it on", async () => {
  inline();
  const jid = await ShipOrderJob.performAsync("o1"); // resolves once the job is parked
  assert.deepEqual(ShipOrderJob.log, []);
  assert.equal(await signal("shipped:o1", { carrier: "ups" }), 1); // resolves after the job ran on
  assert.deepEqual(ShipOrderJob.log, ["ch_o1 via ups"]);
  assert.deepEqual(
    progressOf(jid!).map(({ n, data }) => [n, data]),
    [
      [50, { charged: "ch_o1" }],
      [50, { charged: "ch_o1" }], // the second execution reports again; the step did not run again
      [100, undefined],
    ],
  );
});

test("fake: drain() runs to the wait; a signal sent first is delivered at once", async () => {
  fake();
  await signal("shipped:o2", { carrier: "dhl" }); // kept for a wait that starts later
  await ShipOrderJob.performAsync("o2");
  assert.equal(await ShipOrderJob.drain(), 1);
  assert.deepEqual(ShipOrderJob.log, ["ch_o2 via dhl"]);
});
