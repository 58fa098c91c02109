/**
 * One trace from push to perform, across languages, as OpenTelemetry's Ruby Sidekiq instrumentation
 * (opentelemetry-instrumentation-sidekiq) traces Ruby jobs:
 *
 *   client  a PRODUCER span "<queue> publish" around the push; the W3C context is injected into the
 *           payload itself with the global propagator, so the job carries top-level fields
 *             "traceparent":"00-<trace id>-<span id>-01"  (and "tracestate" when there is one)
 *   server  a CONSUMER span "<queue> process" around perform, the child of the context extracted from
 *           the payload (a Ruby-pushed job with a traceparent continues its trace); errors are recorded
 *           on it and its status set to ERROR
 *
 * A retried or scheduled job keeps the traceparent of its first push: a re-push made outside any span
 * (the poller moving it to its queue) leaves the payload as it is, so every attempt joins one trace.
 *
 * Attributes: Ruby's (messaging.system "sidekiq", messaging.destination, messaging.destination_kind,
 * messaging.message_id, messaging.sidekiq.job_class with the wrapped class for ActiveJob,
 * messaging.operation on the consumer) plus their current semantic-convention names
 * (messaging.destination.name, messaging.message.id, messaging.operation.type/name),
 * messaging.sidekiq.retry_count on a retry, and messaging.message.conversation_id from correlation_id.
 */
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import type { ClientMiddlewareArgs } from "../../client/Client.js";
import type { MiddlewareFunction, Next } from "../../platform/Chain.js";
import { displayClass, type JobPayload } from "../../wire/payload.js";
import type { ServerMiddlewareArgs } from "../../server/context.js";
import { errorClassName, toError } from "../../server/JobRetry.js";
import { toEpochSeconds } from "../../wire/timestamps.js";
import { VERSION } from "../../wire/version.js";
import type { OtelApi } from "./otel.js";

/** The instrumentation scope name spans are recorded under. */
export const TRACER_NAME = "tsq";

export interface TracingMiddleware {
  producer: MiddlewareFunction<ClientMiddlewareArgs>;
  consumer: MiddlewareFunction<ServerMiddlewareArgs>;
}

function attributes(job: JobPayload, queue: string, operation: "publish" | "process"): Attributes {
  const attrs: Attributes = {
    "messaging.system": "sidekiq",
    "messaging.destination": queue,
    "messaging.destination_kind": "queue",
    "messaging.destination.name": queue,
    "messaging.message_id": job.jid,
    "messaging.message.id": job.jid,
    "messaging.sidekiq.job_class": displayClass(job),
    "messaging.operation.type": operation === "publish" ? "send" : "process",
    "messaging.operation.name": operation,
  };
  if (operation === "process") attrs["messaging.operation"] = "process";
  if (typeof job.retry_count === "number") attrs["messaging.sidekiq.retry_count"] = job.retry_count;
  if (typeof job.correlation_id === "string") attrs["messaging.message.conversation_id"] = job.correlation_id;
  return attrs;
}

function recordFailure(api: OtelApi, span: Span, thrown: unknown): void {
  const error = toError(thrown);
  span.recordException(error);
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: `Unhandled exception of type: ${errorClassName(error)}` });
}

/** Runs `next` inside `span` (so pushes made there are its children), recording a failure, then ends it. */
async function within(api: OtelApi, span: Span, parent: Context, next: Next): Promise<void> {
  try {
    await api.context.with(api.trace.setSpan(parent, span), next);
  } catch (error) {
    recordFailure(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Epoch seconds (Sidekiq 6/7) or milliseconds (8) as a Date, for span events. */
function eventTime(value: unknown): Date | undefined {
  const seconds = toEpochSeconds(value);
  return seconds === undefined ? undefined : new Date(seconds * 1000);
}

export function tracingMiddleware(api: OtelApi): TracingMiddleware {
  const tracer: Tracer = api.trace.getTracer(TRACER_NAME, VERSION);
  const producer = async (_class: string, job: JobPayload, queue: string, _redis: unknown, next: Next) => {
    const active = api.context.active();
    if (api.trace.getSpan(active) === undefined && typeof job.traceparent === "string") return next();
    const span = tracer.startSpan(
      `${queue} publish`,
      { kind: api.SpanKind.PRODUCER, attributes: attributes(job, queue, "publish") },
      active,
    );
    api.propagation.inject(api.trace.setSpan(active, span), job);
    await within(api, span, active, next);
  };
  const consumer = async (_instance: object, job: JobPayload, queue: string, next: Next) => {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, job);
    const span = tracer.startSpan(
      `${queue} process`,
      { kind: api.SpanKind.CONSUMER, attributes: attributes(job, queue, "process") },
      parent,
    );
    for (const field of ["created_at", "enqueued_at"] as const) {
      const at = eventTime(job[field]);
      if (at !== undefined) span.addEvent(field, at);
    }
    await within(api, span, parent, next);
  };
  return { producer, consumer };
}
