/**
 * Tracing costs nothing to a process whose application registered no tracer provider: the
 * OpenTelemetry API is not even loaded. Once a provider is registered, the same check finds it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import type * as Api from "@opentelemetry/api";
import { activeOpenTelemetry } from "../../../src/features/tracing/otel.js";

const require = createRequire(import.meta.url);

test("no provider registered: undefined, and @opentelemetry/api stays unloaded; a registered one is found", () => {
  const loaded = () => Object.keys(require.cache).some((path) => path.includes("@opentelemetry/api"));
  assert.equal(activeOpenTelemetry(), undefined);
  assert.equal(loaded(), false, "the API was loaded to learn that tracing is off");
  const api = require("@opentelemetry/api") as typeof Api;
  const provider = new api.ProxyTracerProvider();
  provider.setDelegate({ getTracer: () => api.trace.getTracer("noop-delegate") });
  assert.equal(api.trace.setGlobalTracerProvider(provider), true);
  try {
    assert.ok(activeOpenTelemetry(), "a registered provider turns tracing on");
  } finally {
    api.trace.disable();
  }
  assert.equal(activeOpenTelemetry(), undefined, "disabled again");
});
