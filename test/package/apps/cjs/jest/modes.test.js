"use strict";
// Jest in a CommonJS app: test, expect and afterEach are Jest's globals; require("tsq/testing") and the
// app's require("tsq") load one instance, so the mode reaches its jobs.
const { fake, inline, disable, clearAll } = require("tsq/testing");
const { InvoiceJob } = require("../src/invoices.js");

afterEach(() => {
  clearAll();
  disable();
  InvoiceJob.totals = [];
});

test("fake: the push is held with its arguments until drain() runs it", async () => {
  fake();
  await InvoiceJob.performAsync({ id: 1, lines: [{ price: 5 }, { price: 7 }] });
  expect(InvoiceJob.jobs).toHaveLength(1);
  expect(InvoiceJob.jobs[0].args).toEqual([{ id: 1, lines: [{ price: 5 }, { price: 7 }] }]);
  expect(await InvoiceJob.drain()).toBe(1);
  expect(InvoiceJob.totals).toEqual([12]);
});

test("inline: perform has run when the push resolves; a Date argument fails as in production", async () => {
  inline();
  await InvoiceJob.performAsync({ id: 2, lines: [{ price: 3 }] });
  expect(InvoiceJob.totals).toEqual([3]);
  await expect(InvoiceJob.performAsync({ id: 3, lines: [], placedAt: new Date() })).rejects.toThrow(
    /args\[0\]\.placedAt is a Date/,
  );
});
