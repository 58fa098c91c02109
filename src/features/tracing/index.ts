/**
 * Tracing and correlation ids. `instrumentClient` and `instrumentServer` are called where the chains
 * are built (the Client constructor, the Launcher before its managers copy the server chain): with an
 * OpenTelemetry SDK registered they prepend the tracing middleware, as the Ruby instrumentation
 * prepends its own; without one they add nothing.
 */
import type { ClientMiddlewareArgs } from "../../client/Client.js";
import type { Chain } from "../../platform/Chain.js";
import type { ServerMiddlewareArgs } from "../../server/context.js";
import { activeOpenTelemetry, type OtelApi } from "./otel.js";
import { tracingMiddleware, type TracingMiddleware } from "./middleware.js";

export { withCorrelationId, currentCorrelationId } from "../../platform/correlation.js";

/** One pair of middleware functions per API instance, so instrumenting a chain twice moves, not doubles. */
let built: { api: OtelApi; middleware: TracingMiddleware } | undefined;

function middleware(): TracingMiddleware | undefined {
  const api = activeOpenTelemetry();
  if (api === undefined) return undefined;
  if (built?.api !== api) built = { api, middleware: tracingMiddleware(api) };
  return built.middleware;
}

/** Puts the producer span first in a client chain, when tracing is on. */
export function instrumentClient(chain: Chain<ClientMiddlewareArgs>): void {
  const traced = middleware();
  if (traced) chain.prepend(traced.producer);
}

/** Puts the consumer span first in the server chain, when tracing is on. */
export function instrumentServer(chain: Chain<ServerMiddlewareArgs>): void {
  const traced = middleware();
  if (traced) chain.prepend(traced.consumer);
}
