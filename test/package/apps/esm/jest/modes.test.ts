import { test, expect, afterEach } from "@jest/globals";
import { fake, inline, disable, clearAll } from "tsq/testing";
import { InvoiceJob, type Order } from "../src/invoices.js";

afterEach(() => {
  clearAll();
  disable();
  InvoiceJob.totals = [];
});

test("fake: the push is held with its arguments until drain() runs it", async () => {
  fake();
  await InvoiceJob.performAsync({ id: 1, lines: [{ price: 5 }, { price: 7 }] });
  expect(InvoiceJob.jobs).toHaveLength(1);
  expect(InvoiceJob.jobs[0]?.args).toEqual([{ id: 1, lines: [{ price: 5 }, { price: 7 }] }]);
  expect(await InvoiceJob.drain()).toBe(1);
  expect(InvoiceJob.totals).toEqual([12]);
});

test("inline: perform has run when the push resolves; a Date argument fails as in production", async () => {
  inline();
  await InvoiceJob.performAsync({ id: 2, lines: [{ price: 3 }] });
  expect(InvoiceJob.totals).toEqual([3]);
  // A property perform's type does not name passes the type check; strict arguments still refuse it.
  const order: Order = Object.assign({ id: 3, lines: [] }, { placedAt: new Date() });
  await expect(InvoiceJob.performAsync(order)).rejects.toThrow(/args\[0\]\.placedAt is a Date/);
});
