/** The job logger context: lines logged inside a job carry its jid, class and queue; nothing leaks. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { configureLogger, logger, withJobContext } from "../../src/platform/logger.js";

test("job context is on every line inside the job, on none outside, and line fields never leak", async () => {
  const lines: Record<string, unknown>[] = [];
  configureLogger({
    level: "info",
    base: { child: 1 },
    destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  });
  await withJobContext({ jid: "j1", class: "HardJob", queue: "critical" }, async () => {
    logger().info({ step: 1 }, "inside");
    await new Promise((r) => setTimeout(r, 5));
    logger().info("after await");
  });
  logger().info("outside");
  assert.equal(lines.length, 3);
  assert.deepEqual(
    [lines[0]!.jid, lines[0]!.class, lines[0]!.queue, lines[0]!.step, lines[0]!.child],
    ["j1", "HardJob", "critical", 1, 1],
  );
  assert.equal(lines[1]!.jid, "j1");
  assert.equal(lines[1]!.step, undefined, "fields of one line must not leak into the next");
  assert.equal(lines[2]!.jid, undefined);
});

test("the application's own pino: tsq logs through a child of it, with job context, safe errors and its level", async () => {
  const lines: Record<string, unknown>[] = [];
  const app = pino(
    { level: "debug", base: { app: "shop" } },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  configureLogger({ logger: app, base: { component: "tsq" } });
  logger.debug("from tsq");
  await withJobContext({ jid: "j2", class: "ChargeJob", queue: "default" }, async () => {
    logger.info("inside a job");
  });
  const failure = Object.assign(new Error("boom"), { options: { password: "hunter2" } });
  logger().error({ err: failure }, "failed");
  assert.equal(lines.length, 3);
  assert.deepEqual([lines[0]!.app, lines[0]!.component, lines[0]!.msg], ["shop", "tsq", "from tsq"]);
  assert.deepEqual([lines[1]!.jid, lines[1]!.class, lines[1]!.queue], ["j2", "ChargeJob", "default"]);
  assert.equal((lines[2]!.err as { message: string }).message, "boom");
  assert.ok(!JSON.stringify(lines[2]).includes("hunter2"), "only the error's name, message and stack are kept");
  configureLogger({ level: "info" });
  assert.equal(typeof logger().info, "function");
});
