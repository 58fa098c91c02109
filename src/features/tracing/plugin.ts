/**
 * Tracing and correlation ids as a plug-in: a producer span per push and a consumer span per job when an
 * OpenTelemetry SDK is registered (looked up when a Client or worker is built; nothing otherwise), and
 * the current correlation id stamped into every pushed payload that has none (docs/tracing.md).
 */
import { addCorrelationId } from "../../platform/correlation.js";
import { definePlugin } from "../../server/plugin.js";
import { activeOpenTelemetry } from "./otel.js";
import { tracingMiddleware } from "./middleware.js";

export const tracing = definePlugin({
  name: "tracing",
  client() {
    const api = activeOpenTelemetry();
    return {
      stamp: (job) => addCorrelationId(job),
      ...(api ? { middleware: tracingMiddleware(api).producer } : {}),
    };
  },
  server() {
    const api = activeOpenTelemetry();
    return api ? { middleware: { use: tracingMiddleware(api).consumer } } : undefined;
  },
});
