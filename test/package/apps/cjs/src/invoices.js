"use strict";
// A job whose argument is an object: what the fake and inline tests push.
const { Job } = require("tsq");

class InvoiceJob extends Job {
  perform(order) {
    InvoiceJob.totals.push(order.lines.reduce((sum, line) => sum + line.price, 0));
  }
}
InvoiceJob.totals = [];

module.exports = { InvoiceJob };
