/**
 * DueAlarms: a wait ends when the earliest alarm comes due (not at its full length), an alarm due
 * already or fired mid-poll ends the next wait at once, alarms are spent once, and the set is bounded.
 * Bounds only: a loaded machine may wake late, never early.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DueAlarms } from "../../src/server/DueAlarms.js";

const LONG_MS = 60_000;

async function timed(work: Promise<void>): Promise<number> {
  const started = Date.now();
  await work;
  return Date.now() - started;
}

test("a wait of 60 s ends at the alarm, not before it, and spends it", async () => {
  const alarms = new DueAlarms();
  const never = new AbortController().signal;
  // Timed from the alarm's own reference: a busy process may take a while to reach the wait.
  const addedAt = Date.now();
  alarms.add(addedAt / 1000 + 0.3);
  await alarms.sleep(LONG_MS, never);
  const ms = Date.now() - addedAt;
  assert.ok(ms >= 290, `not before the alarm (${ms} ms)`);
  assert.ok(ms < LONG_MS / 2, `well before the wait's end (${ms} ms)`);
  assert.equal(alarms.size, 0, "spent");
});

test("an alarm already due, or one that fired while no wait ran, ends the next wait at once", async () => {
  const alarms = new DueAlarms();
  const never = new AbortController().signal;
  alarms.add(Date.now() / 1000 - 5);
  assert.ok((await timed(alarms.sleep(LONG_MS, never))) < LONG_MS / 2);
  alarms.add(Date.now() / 1000 + 0.05);
  await new Promise((resolve) => setTimeout(resolve, 200)); // fired while no one waited (a poll runs)
  assert.ok((await timed(alarms.sleep(LONG_MS, never))) < LONG_MS / 2);
  assert.equal(alarms.size, 0);
});

test("alarms later than the wait leave it to its length and stay armed; the stop signal ends it", async () => {
  const alarms = new DueAlarms();
  alarms.add(Date.now() / 1000 + 3600);
  const ms = await timed(alarms.sleep(100, new AbortController().signal));
  assert.ok(ms >= 95, `the wait ran its length (${ms} ms)`);
  assert.equal(alarms.size, 1, "the later alarm is kept");
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 50);
  assert.ok((await timed(alarms.sleep(LONG_MS, stop.signal))) < LONG_MS / 2, "stop ends the wait");
  alarms.clear();
  assert.equal(alarms.size, 0);
});

test("many jobs due at one time make one alarm; at most 10,000 distinct times are kept", () => {
  const alarms = new DueAlarms();
  const at = Date.now() / 1000 + 3600;
  for (let i = 0; i < 1000; i++) alarms.add(at);
  assert.equal(alarms.size, 1);
  for (let i = 0; i < 20_000; i++) alarms.add(at + i);
  assert.equal(alarms.size, 10_000, "bounded: the rest wait for the ordinary poll");
  alarms.add(Number.NaN);
  alarms.add(Infinity);
  assert.equal(alarms.size, 10_000);
  alarms.clear();
});
