"use strict";
// node:test in a CommonJS app: the same modes as test/modes.test.js (Vitest), with require().
const { test, afterEach } = require("node:test");
const assert = require("node:assert/strict");
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
  assert.equal(InvoiceJob.jobs.length, 1);
  assert.deepEqual(InvoiceJob.jobs[0].args, [{ id: 1, lines: [{ price: 5 }, { price: 7 }] }]);
  assert.equal(await InvoiceJob.drain(), 1);
  assert.deepEqual(InvoiceJob.totals, [12]);
});

test("inline: perform has run when the push resolves; a Date argument fails as in production", async () => {
  inline();
  await InvoiceJob.performAsync({ id: 2, lines: [{ price: 3 }] });
  assert.deepEqual(InvoiceJob.totals, [3]);
  await assert.rejects(
    InvoiceJob.performAsync({ id: 3, lines: [], placedAt: new Date() }),
    /args\[0\]\.placedAt is a Date/,
  );
});
