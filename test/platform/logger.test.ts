/** The job logger context: lines logged inside a job carry its jid, class and queue; nothing leaks. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { configureLogger, logger, withJobContext, withJobScope } from "../../src/platform/logger.js";
import { jobLines } from "../../src/platform/jobLines.js";
import { registerSecret } from "../../src/platform/secrets.js";

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

test("a job's start and done lines through jobLines are byte for byte pino's, redaction included", async () => {
  const raw: string[] = [];
  registerSecret("pw-for-lines-test");
  const root = configureLogger({
    level: "info",
    base: { child: 2 },
    destination: { write: (s: string) => void raw.push(s) },
  });
  const contexts = [
    { jid: "a1", class: "PlainJob", queue: "default" },
    { jid: "a2", class: 'Quo"ted\\Job', queue: "tab\there", correlation_id: "req-pw-for-lines-test-1" },
    { jid: "a3", class: "Long".repeat(40), queue: "é-ü-日本-😀\u2028</script>" },
    { jid: "a4", class: "Nul\u0000Del\u007fJob", queue: "\u001f" },
  ];
  for (const log of contexts) {
    await withJobScope({ log, logger: root }, async () => {
      const lines = jobLines(root, log);
      lines.start();
      root.info("start");
      lines.done(1.5);
      root.info({ elapsed_ms: 1.5, status: "done" }, "done");
      lines.done(NaN);
      root.info({ elapsed_ms: NaN, status: "done" }, "done");
    });
  }
  assert.equal(raw.length, 24);
  const timeless = raw.map((line) => line.replace(/"time":\d+/, ""));
  for (let i = 0; i < timeless.length; i += 2) assert.equal(timeless[i], timeless[i + 1]);
  assert.ok(
    raw.every((line) => !line.includes("pw-for-lines-test")),
    "the registered secret is masked",
  );
  assert.equal(raw.filter((line) => line.includes('"jid":"a2"')).length, 6);
  assert.ok(
    raw.every((line) => line.split('"jid"').length === 2),
    "no field twice",
  );
});

test("jobLines goes through pino where its text would differ: a lone surrogate, a quiet level, an app's logger", async () => {
  const written: string[] = [];
  const sink = { write: (s: string) => void written.push(s) };
  const cases = [
    {
      logger: configureLogger({ level: "info", destination: sink }),
      log: { jid: "b1", class: "Odd\ud800Job", queue: "q" },
    },
    { logger: configureLogger({ level: "warn", destination: sink }), log: { jid: "b2", class: "Job", queue: "q" } },
    {
      logger: configureLogger({ logger: pino({ level: "info" }, sink) }),
      log: { jid: "b3", class: "Job", queue: "q" },
    },
  ];
  for (const { logger: through, log } of cases)
    await withJobScope({ log, logger: through }, async () => {
      const lines = jobLines(through, log);
      lines.start();
      lines.done(2);
    });
  const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    lines.map(({ jid, class: className, msg }) => [jid, className, msg]),
    [
      ["b1", "Odd\ud800Job", "start"],
      ["b1", "Odd\ud800Job", "done"],
      ["b3", "Job", "start"],
      ["b3", "Job", "done"],
    ],
    "pino's own lines (the lone surrogate kept as pino writes it), none at warn, the app's logger with the job's fields",
  );
  configureLogger({ level: "info" });
});
