/**
 * An app's logger given to tsq (`new Worker({ logger })`, `configureLogger({ logger })`) gets tsq's job
 * lines (start, done, fail) with the job's fields, and what a job logs with `logger` goes through it with
 * the same fields.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { useRedis } from "../helpers/redis.js";
import { Worker } from "../../src/library/Worker.js";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";
import { configureLogger, logger } from "../../src/platform/logger.js";
import { withCorrelationId } from "../../src/platform/correlation.js";

const handle = useRedis();

type Line = Record<string, unknown>;

/** A real pino logger whose lines land in `lines`, as an app's logger would write them. */
function capturingLogger(): { app: pino.Logger; lines: Line[] } {
  const lines: Line[] = [];
  const app = pino(
    { level: "info", base: { app: "shop" } },
    { write: (s: string) => void lines.push(JSON.parse(s) as Line) },
  );
  return { app, lines };
}

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

class ChattyJob extends Job {
  perform(step: number) {
    logger.info({ step }, "inside, logger.info");
    logger().warn({ step }, "inside, logger().warn");
  }
}

class FailingJob extends Job {
  static override options = { retry: false };
  perform() {
    throw new Error("boom");
  }
}

/** Runs one ChattyJob and one FailingJob (both under correlation id "req-7") through `worker`. */
async function runJobs(worker: Worker): Promise<{ chatty: string; failing: string }> {
  let ends = 0;
  worker.on("job:end", () => ends++);
  await worker.start();
  const client = new Client({ redis: handle.url });
  try {
    const [chatty, failing] = await withCorrelationId("req-7", () =>
      Promise.all([client.push({ class: ChattyJob, args: [1] }), client.push({ class: FailingJob, args: [] })]),
    );
    await until(() => ends === 2);
    return { chatty: chatty!, failing: failing! };
  } finally {
    await client.close();
    await worker.stop({ timeout: 1 });
  }
}

function checkJobLines(lines: Line[], jids: { chatty: string; failing: string }): void {
  const of = (jid: string, msg: string) => lines.find((line) => line.jid === jid && line.msg === msg);
  for (const [jid, klass, messages] of [
    [jids.chatty, "ChattyJob", ["start", "done", "inside, logger.info", "inside, logger().warn"]],
    [jids.failing, "FailingJob", ["start", "fail"]],
  ] as const) {
    for (const msg of messages) {
      const line = of(jid, msg);
      assert.ok(line, `the app's logger got "${msg}" of ${klass} with its jid; got ${JSON.stringify(lines)}`);
      assert.deepEqual(
        [line.class, line.queue, line.correlation_id, line.app],
        [klass, "default", "req-7", "shop"],
        `"${msg}" of ${klass} carries the job's fields`,
      );
    }
  }
  assert.equal(of(jids.chatty, "inside, logger.info")!.step, 1);
  const started = lines.find((line) => line.msg === "tsq worker started");
  assert.ok(started, "tsq's own lines reach the app's logger");
  assert.equal(started.jid, undefined, "a line outside any job has no job fields");
}

test("new Worker({ logger }): tsq's job lines and the job's own `logger` lines go through it with the job's fields", async () => {
  const { app, lines } = capturingLogger();
  const worker = new Worker({ redis: handle.url, jobs: [ChattyJob, FailingJob], logger: app });
  checkJobLines(lines, await runJobs(worker));
});

test("configureLogger({ logger }): a worker built after it logs job lines through it with the job's fields", async (t) => {
  const { app, lines } = capturingLogger();
  configureLogger({ logger: app });
  t.after(() => configureLogger({ level: "info" }));
  const worker = new Worker({ redis: handle.url, jobs: [ChattyJob, FailingJob] });
  checkJobLines(lines, await runJobs(worker));
});
