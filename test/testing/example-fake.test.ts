import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Job } from "tsq";
import { fake, disable, clearAll, drainAll } from "tsq/testing";

class WelcomeEmailJob extends Job {
  static sent: string[] = [];
  perform(userId: number, locale: string): void {
    WelcomeEmailJob.sent.push(`${userId}:${locale}`);
  }
}

// The code under test: what the app does when someone signs up.
async function signUp(userId: number): Promise<void> {
  await WelcomeEmailJob.set({ queue: "mailers" }).performAsync(userId, "en");
  await WelcomeEmailJob.performIn(24 * 3600, userId, "en"); // a reminder tomorrow
}

beforeEach(() => fake());
afterEach(() => {
  clearAll();
  disable();
});

test("signing up enqueues a welcome email and a reminder", async () => {
  await signUp(42);
  const [welcome, reminder] = WelcomeEmailJob.jobs;
  assert.deepEqual(welcome?.args, [42, "en"]);
  assert.equal(welcome?.queue, "mailers");
  assert.ok(reminder?.at !== undefined && reminder.at > Date.now() / 1000 + 23 * 3600);
});

test("draining runs the held jobs", async () => {
  await signUp(7);
  await WelcomeEmailJob.drain(); // this class only; drainAll() runs every class
  assert.deepEqual(WelcomeEmailJob.sent, ["7:en", "7:en"]);
  assert.equal(WelcomeEmailJob.jobs.length, 0);
  assert.equal(await drainAll(), 0);
});
