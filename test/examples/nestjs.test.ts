/**
 * examples/nestjs, compiled as an app compiles it (its own tsconfig with decorator metadata,
 * `import ... from "tsq"`): the worker starts with the application, a service enqueues, the job runs
 * on an instance from Nest's container with the injected Mailer, and closing the application stops the
 * worker (its process record leaves Redis).
 */
import { test, before, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { NestFactory } from "@nestjs/core";
import type { DynamicModule } from "@nestjs/common";
import { useRedis } from "../helpers/redis.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { PROCESSES, processKey, queueKey } from "../../src/wire/keys.js";

const handle = useRedis();

type Class = abstract new (...args: never[]) => unknown;
interface Example {
  AppModule: { forRoot(redis?: string): DynamicModule };
  Mailer: Class;
  Signups: Class;
  Tsq: Class;
}
let example: Example;

/** A module of the compiled example (a path the root build does not follow). */
async function load(file: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(join(ROOT, "dist/examples/nestjs", file)).href)) as Record<string, unknown>;
}

before(async () => {
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "examples/nestjs")],
    { encoding: "utf8" },
  );
  assert.equal(tsc.status, 0, `examples/nestjs does not compile: ${tsc.stdout}${tsc.stderr}`);
  example = {
    ...(await load("app.module.js")),
    ...(await load("mailer.service.js")),
    ...(await load("signups.service.js")),
    ...(await load("tsq.module.js")),
  } as unknown as Example;
});

async function until(check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a service enqueues, the worker runs the job with the Mailer Nest injected, close stops it", async (t: TestContext) => {
  const app = await NestFactory.createApplicationContext(example.AppModule.forRoot(handle.url), { logger: false });
  t.after(() => app.close()); // a failed assertion must not leave the worker running
  await app.init();
  const tsq = app.get<unknown, { identity: string | undefined }>(example.Tsq);
  const identity = tsq.identity;
  assert.ok(identity, "the worker started when the application bootstrapped");
  assert.equal(await handle.redis.scard(PROCESSES), 1);
  assert.equal(await handle.redis.exists(processKey(identity)), 1);

  const signups = app.get<unknown, { signUp(email: string): Promise<string | null> }>(example.Signups);
  const emails = ["ada@example.com", "grace@example.com", "edsger@example.com"];
  const jids = await Promise.all(emails.map((email) => signups.signUp(email)));
  const mailer = app.get<unknown, { sent: { to: string; jid: string | undefined }[] }>(example.Mailer);
  await until(() => mailer.sent.length === emails.length);
  // The Mailer the jobs used is the container's; each job saw its own jid.
  const sent = [...mailer.sent].sort((a, b) => a.to.localeCompare(b.to));
  const expected = emails.map((to, i) => ({ to, jid: jids[i] })).sort((a, b) => a.to.localeCompare(b.to));
  assert.deepEqual(sent, expected);

  await app.close();
  assert.equal(await handle.redis.scard(PROCESSES), 0, "the worker left Redis when the application closed");
  assert.equal(await handle.redis.llen(queueKey("default")), 0);
});
