/**
 * What the examples of README.md and docs/*.md take from the app around them, declared for the test that
 * compiles every ```ts block (test/package/docBlocks.ts): the app's own services (`db`, `payments`), a
 * web framework's `app` object, job classes defined in another part of the app, and values a snippet
 * starts from (`jid`, `bid`). Nothing of tsq's own is declared here: a block imports what it uses
 * from "tsq", as an app does.
 */
import type { Express } from "express";
import type { FastifyInstance } from "fastify";
import { Job, type Client, type DeathHandler, type OutcomeWatcher, type Worker } from "tsq";
import type { connectRedis } from "tsq/api";

declare global {
  // A web framework's objects, as the app has them.
  const app: Express;
  const fastify: FastifyInstance;

  // Values a snippet starts from.
  const redis: ReturnType<typeof connectRedis>;
  const client: Client;
  const worker: Worker;
  const watcher: OutcomeWatcher;
  const jid: string;
  const jids: string[];
  const bid: string;
  const reportId: number;
  const rows: { id: number }[];
  const signal: AbortSignal;
  function onProgress(done: number): void;
  const notify: DeathHandler;

  // The app's own services.
  const metrics: { observe(status: string, seconds: number): void };
  const payments: {
    charge(orderId: string, options: { idempotencyKey: string; signal: AbortSignal }): Promise<{ id: string }>;
    refund(chargeId: string): Promise<void>;
  };
  const mail: { sendShipped(orderId: string, shipment: unknown): Promise<void> };
  const sms: { send(userId: number, text: string): Promise<void> };
  function alertOps(jid: string, error: Error): void;
  function buildReport(month: string): Promise<unknown[]>;
  function readRows(file: string): Promise<string[]>;
  function importRow(row: string): Promise<void>;
  function fetchPage(page: number): Promise<number[]>;
  function backfillRow(table: string, id: number): Promise<void>;
  function chargeCustomer(userId: number): Promise<void>;
  function pushToErp(userId: number): Promise<void>;
  function runQuery(): Promise<void>;
  function countPendingExports(): Promise<number>;

  // Job classes of the app that a snippet enqueues.
  class HardJob extends Job {
    perform(name: string, count: number): Promise<void>;
  }
  class AlertOps extends Job {
    perform(status: object, options: object): Promise<void>;
  }
  class ImportRow extends Job {
    perform(row: { id: number }): Promise<void>;
  }
  class ItemJob extends Job {
    perform(item: number): Promise<void>;
  }
  class FetchReport extends Job {
    perform(reportId: number): Promise<void>;
  }
  class PartA extends Job {
    perform(): Promise<void>;
  }
  class PartB extends Job {
    perform(): Promise<void>;
  }
  class PartC extends Job {
    perform(n: number): Promise<void>;
  }
  class Merge extends Job {
    perform(): Promise<void>;
  }
  class ChargeJob extends Job {
    perform(orderId: string): Promise<void>;
  }
  class SendInvoiceJob extends Job {
    perform(invoiceId: number): Promise<void>;
  }
}
