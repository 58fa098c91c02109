/**
 * OpenTelemetry, when the application uses it. `@opentelemetry/api` is an optional peer dependency,
 * required once, on first use, through its CommonJS entry (the API keeps its registrations on
 * `globalThis`, so this is the API the application registered its SDK with, whichever way it loaded
 * it). Tracing is on only when the API loads and a tracer provider has been registered by the time a
 * client or worker is built; otherwise nothing is installed and nothing is paid per job. Since
 * prom-client depends on the API, it is usually installed; the registered provider is the real switch.
 */
import { createRequire } from "node:module";
import type * as Api from "@opentelemetry/api";

export type OtelApi = typeof Api;

/** undefined: not tried yet; null: not installed. */
let loaded: OtelApi | null | undefined;

function load(): OtelApi | null {
  try {
    return createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
  } catch (error) {
    if ((error as { code?: string }).code === "MODULE_NOT_FOUND") return null;
    throw error;
  }
}

/**
 * Where @opentelemetry/api 1.x keeps what an application registered (`registerGlobal`): an SDK that
 * set a tracer provider left a `trace` entry there, through whichever copy of the API it loaded.
 */
const REGISTERED = Symbol.for("opentelemetry.js.api.1");

/** True when some copy of the API holds a registered tracer provider (no module is loaded to tell). */
function providerRegistered(): boolean {
  const registered = (globalThis as { [REGISTERED]?: { trace?: unknown } })[REGISTERED];
  return registered?.trace !== undefined;
}

/** The API when tracing is on now (installed, and a tracer provider registered), else undefined. */
export function activeOpenTelemetry(): OtelApi | undefined {
  // Nothing registered: tracing is off, and the API's 58 modules (~60 ms CPU per process) stay unloaded.
  if (!providerRegistered()) return undefined;
  loaded ??= load();
  if (loaded === null) return undefined;
  const provider = loaded.trace.getTracerProvider() as { getDelegate?: () => unknown };
  // Until an SDK registers, the global provider is a proxy whose delegate is the API's no-op provider,
  // the same one a fresh proxy has.
  const delegate = provider.getDelegate?.();
  return delegate !== undefined && delegate === new loaded.ProxyTracerProvider().getDelegate() ? undefined : loaded;
}
