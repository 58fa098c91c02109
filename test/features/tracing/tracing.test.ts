/**
 * OpenTelemetry tracing (src/features/tracing/) with the real SDK (@opentelemetry/sdk-trace-base's in-memory
 * exporter, the W3C propagator, the AsyncLocalStorage context manager): push and perform spans in one
 * trace across a retry and a nested push, a Ruby-pushed job with a traceparent continuing its trace,
 * and nothing installed while no SDK is registered.
 */
import { SujServerMiddleware } from "../../../src/features/locks/sidekiq-unique-jobs/ServerMiddleware.js";
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { context, propagation, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { rubyEval } from "../../helpers/rails.js";
import { Client } from "../../../src/client/Client.js";
import { Job } from "../../../src/client/Job.js";
import { performLater } from "../../../src/features/activejob/performLater.js";
import type { JobPayload } from "../../../src/wire/payload.js";

const redis = useRedis();
const exporter = new InMemorySpanExporter();

/** Registers the SDK globally, as an application's tracing setup does before building clients and workers. */
function registerSdk(): void {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

afterEach(() => {
  trace.disable();
  propagation.disable();
  context.disable();
  exporter.reset();
});

async function until(check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const spans = (name?: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

let attempts = 0;
class FlakyJob extends Job {
  perform(): void {
    attempts += 1;
    if (attempts === 1) throw new TypeError("first attempt fails");
  }
}

class ParentJob extends Job {
  async perform(): Promise<void> {
    await ChildJob.performAsync();
  }
}

class ChildJob extends Job {
  perform(): void {}
}

test("without a registered SDK nothing is installed and payloads carry no trace context", async (t) => {
  // The client always has the lock middleware (deduplication, unique jobs: they act on their own classes
  // only); tracing adds none, and a worker without such classes has no other server middleware.
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());
  assert.deepEqual(client.middleware.list(), []); // the app's chain: plug-ins never add to it
  const launcher = testLauncher(redis.url, [ChildJob]);
  // Only sidekiq-unique-jobs' run side, which every worker has (a Ruby-pushed job names its lock in its
  // payload); it makes no Redis call for a job without one.
  assert.deepEqual(launcher.ctx.serverMiddleware.list(), [SujServerMiddleware]);
  await client.push({ class: "ChildJob", args: [] });
  const [raw] = await redis.redis.lrange("queue:default", 0, -1);
  assert.equal((JSON.parse(raw!) as JobPayload).traceparent, undefined);
});

test("push and perform spans share one trace, across a failed attempt and its retry", async () => {
  registerSdk();
  attempts = 0;
  const client = new Client({ redis: redis.url });
  const launcher = testLauncher(redis.url, [FlakyJob], { pollIntervalAverage: 1 });
  const tracer = trace.getTracer("test");
  const jid = await tracer.startActiveSpan("request", async (request) => {
    const pushed = await client.push({ class: FlakyJob, args: [] });
    request.end();
    return pushed;
  });
  await client.close();
  const [raw] = await redis.redis.lrange("queue:default", 0, -1);
  const payload = JSON.parse(raw!) as JobPayload;
  const [request] = spans("request");
  const [publish] = spans("default publish");
  assert.ok(request && publish);
  assert.equal(
    payload.traceparent,
    `00-${publish.spanContext().traceId}-${publish.spanContext().spanId}-01`,
    "W3C context at the top level of the payload, as the Ruby instrumentation writes it",
  );
  assert.equal(publish.kind, SpanKind.PRODUCER);
  assert.equal(parentOf(publish), request.spanContext().spanId);
  assert.deepEqual(
    [
      publish.attributes["messaging.system"],
      publish.attributes["messaging.destination"],
      publish.attributes["messaging.message_id"],
      publish.attributes["messaging.sidekiq.job_class"],
    ],
    ["sidekiq", "default", jid, "FlakyJob"],
  );

  await launcher.start();
  await until(async () => (await redis.redis.zcard("retry")) === 1);
  // Due now instead of in 15+ s: the poller moves it back through the client, as it would later.
  const [retried] = await redis.redis.zrange("retry", 0, -1);
  await redis.redis.zadd("retry", "XX", String(Date.now() / 1000), retried!);
  await until(() => attempts === 2 && spans("default process").length === 2);
  await launcher.stop();

  const [failed, succeeded] = spans("default process").sort((a, b) => a.startTime[0] - b.startTime[0]);
  const traceId = request.spanContext().traceId;
  for (const span of [publish, failed!, succeeded!]) assert.equal(span.spanContext().traceId, traceId, span.name);
  for (const span of [failed!, succeeded!]) {
    assert.equal(span.kind, SpanKind.CONSUMER);
    assert.equal(parentOf(span), publish.spanContext().spanId, "each attempt is a child of the push");
    assert.equal(span.attributes["messaging.operation"], "process");
    assert.equal(span.attributes["messaging.message_id"], jid);
  }
  assert.equal(failed!.status.code, SpanStatusCode.ERROR);
  assert.equal(failed!.status.message, "Unhandled exception of type: TypeError");
  assert.equal(
    failed!.events.find((e) => e.name === "exception")?.attributes?.["exception.message"],
    "first attempt fails",
  );
  assert.equal(succeeded!.status.code, SpanStatusCode.UNSET);
  assert.equal(succeeded!.attributes["messaging.sidekiq.retry_count"], 0, "the retry's attempt says so");
  assert.ok(succeeded!.events.some((e) => e.name === "enqueued_at"));
});

test("a job enqueued by a job is traced as its child; an ActiveJob is named by its wrapped class", async () => {
  registerSdk();
  const launcher = testLauncher(redis.url, [ParentJob, ChildJob]);
  const client = new Client({ redis: redis.url });
  await client.push({ class: "ParentJob", args: [] });
  await performLater("ChildJob", [], { client });
  await client.close();
  await launcher.start();
  await until(() => spans("default process").length === 3);
  await launcher.stop();
  const processes = spans("default process");
  const parent = processes.find((s) => s.attributes["messaging.sidekiq.job_class"] === "ParentJob")!;
  const nested = spans("default publish").find((s) => parentOf(s) === parent.spanContext().spanId)!;
  assert.ok(nested, "the nested push is a child of the parent's perform");
  const child = processes.find((s) => parentOf(s) === nested.spanContext().spanId)!;
  assert.equal(child.spanContext().traceId, parent.spanContext().traceId);
  const wrapped = processes.filter((s) => s !== child && s !== parent);
  assert.equal(wrapped.length, 1);
  assert.equal(wrapped[0]!.attributes["messaging.sidekiq.job_class"], "ChildJob", "the wrapped class");
});

test("a job pushed by Ruby with a traceparent continues that trace", async (t) => {
  if (!requireRubySidekiq(t)) return;
  registerSdk();
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const spanId = "00f067aa0ba902b7";
  const jid = await rubyEval<string>(
    `require "sidekiq"; require "json"; Redis.silence_deprecations = true
     puts JSON.generate(Sidekiq::Client.push("class" => "ChildJob", "args" => [],
       "traceparent" => "00-${traceId}-${spanId}-01", "tracestate" => "ruby=1"))`,
    redis.url,
  );
  const launcher = testLauncher(redis.url, [ChildJob]);
  await launcher.start();
  await until(() => spans("default process").length === 1);
  await launcher.stop();
  const [span] = spans("default process");
  assert.equal(span!.spanContext().traceId, traceId);
  assert.equal(parentOf(span!), spanId);
  assert.equal(span!.parentSpanContext?.traceState?.get("ruby"), "1", "tracestate is carried");
  assert.equal(span!.attributes["messaging.message_id"], jid);
});
