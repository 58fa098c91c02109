/**
 * tsq/testing: Sidekiq::Testing's modes for node:test, Vitest and Jest (docs/testing.md).
 *
 *   import { fake, inline, disable, drainAll, clearAll, startTestWorker } from "tsq/testing";
 *
 *   fake();                         // pushes held in memory: HardJob.jobs, HardJob.drain(), HardJob.clear()
 *   inline();                       // performAsync runs perform at once (JSON round trip, middleware)
 *   disable();                      // the default: pushes go to Redis
 *
 * The mode belongs to one controller, installed on the default client (the one `HardJob.performAsync`
 * uses) by the first switch; it stays when `configureClient` replaces that client. A switch with no
 * default client configured yet configures one (`configureClient()`: every built-in feature, connected
 * only if a push reaches Redis), as the app would at boot.
 */
import type { Client } from "../client/Client.js";
import { defaultClient, hasDefaultClient } from "../client/defaultClient.js";
import { configureClient } from "../library/Client.js";
import type { JobPayload } from "../wire/payload.js";
import { TestMode, type TestModeName, type TestModeOptions } from "./TestMode.js";
import type { ProgressReport } from "./runJob.js";

import { startTestWorker as start, type TestWorker, type TestWorkerConfig } from "./TestWorker.js";

export type { TestWorker, TestWorkerConfig } from "./TestWorker.js";
export type { TestModeName, TestModeOptions } from "./TestMode.js";
export type { ProgressReport } from "./runJob.js";

/** The one controller of this module. */
const controller = new TestMode();

/** The default client the mode is installed on: configured here when the app has not yet. */
function testedClient(): Client {
  return hasDefaultClient() ? defaultClient() : configureClient();
}

/** Pushes are held in memory per class until drained or cleared; nothing reaches Redis. */
export function fake(options?: TestModeOptions): void {
  controller.switch("fake", testedClient(), options);
}

/** `performAsync` (and performIn/performAt) runs `perform` at once and resolves when it has ended. */
export function inline(options?: TestModeOptions): void {
  controller.switch("inline", testedClient(), options);
}

/** Pushes go to Redis again (the default). Jobs held by fake mode stay until cleared. */
export function disable(): void {
  controller.switch("disable", testedClient());
}

/** The mode now: "fake", "inline" or "disable". */
export function testMode(): TestModeName {
  return controller.mode;
}

/** Runs every held job of every class until none is left (jobs pushed by drained jobs too); resolves to how many ran. */
export function drainAll(): Promise<number> {
  return controller.drainAll();
}

/** Forgets every held job, recorded progress, and durable jobs' journals and signals kept in memory. */
export function clearAll(): void {
  controller.clearAll();
}

/**
 * A real in-process worker on a private redis-server (see TestWorker.ts), for integration tests in
 * disable mode: in fake or inline mode pushes would never reach it, so it refuses to start.
 */
export async function startTestWorker(config: TestWorkerConfig): Promise<TestWorker> {
  if (controller.mode !== "disable")
    throw new Error(
      `startTestWorker needs disable mode (real Redis) and the mode is ${controller.mode}: call disable() first`,
    );
  return start(config);
}

/**
 * What job `jid` reported with `this.progress(n, data)` while it ran in inline mode or `drain()`, oldest
 * first (`{ n, data?, at }`, `at` in epoch seconds); empty when it reported nothing. clearAll() forgets it.
 */
export function progressOf(jid: string): ProgressReport[] {
  return controller.progressOf(jid);
}

/** Every held job, oldest first within its class (each class's are `HardJob.jobs`). */
export function allJobs(): JobPayload[] {
  return controller.allJobs();
}
