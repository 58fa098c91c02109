// A job whose argument is an object: what the fake and inline tests push.
import { Job } from "tsq";

export interface Order {
  id: number;
  lines: { price: number }[];
}

export class InvoiceJob extends Job {
  static totals: number[] = [];
  perform(order: Order): void {
    InvoiceJob.totals.push(order.lines.reduce((sum, line) => sum + line.price, 0));
  }
}
