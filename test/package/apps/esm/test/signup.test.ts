import { test, expect, beforeEach, afterEach } from "vitest";
import { fake, disable, clearAll } from "tsq/testing";
import { WelcomeEmailJob, signUp } from "../src/signup.js";

beforeEach(() => fake());
afterEach(() => {
  clearAll();
  disable();
});

test("signing up enqueues a welcome email", async () => {
  await signUp(42);
  expect(WelcomeEmailJob.jobs).toHaveLength(2);
  expect(WelcomeEmailJob.jobs[0]).toMatchObject({ args: [42, "en"], queue: "mailers" });
});

test("draining runs the held jobs", async () => {
  await signUp(7);
  await WelcomeEmailJob.drain();
  expect(WelcomeEmailJob.jobs).toHaveLength(0);
});
