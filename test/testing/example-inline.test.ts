import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Job } from "tsq";
import { inline, disable } from "tsq/testing";

class InvoiceJob extends Job {
  static totals: number[] = [];
  perform(order: { id: number; lines: { price: number }[] }): void {
    InvoiceJob.totals.push(order.lines.reduce((sum, line) => sum + line.price, 0));
  }
}

beforeEach(() => inline());
afterEach(() => disable());

test("performAsync runs the job before it resolves", async () => {
  await InvoiceJob.performAsync({ id: 1, lines: [{ price: 5 }, { price: 7 }] });
  assert.deepEqual(InvoiceJob.totals, [12]);
});

test("arguments that would not survive Redis fail here too", async () => {
  // A property perform's type does not name passes the type check; strict arguments still refuse it.
  const order = { id: 2, lines: [], placedAt: new Date() };
  await assert.rejects(InvoiceJob.performAsync(order), /args\[0\]\.placedAt is a Date/);
});
