/** Reading `static concurrencyLimit`: a number, a function read per job, none, and bad values named. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError } from "../../../../src/wire/errors.js";
import { concurrencyLimitOf } from "../../../../src/features/locks/gitlab-concurrency-limits/policy.js";

test("a number, a function called each time, or nothing (no limit)", () => {
  class Fixed {
    static concurrencyLimit = 3;
  }
  let current = 5;
  class Dynamic {
    static concurrencyLimit = () => current;
  }
  class Paused {
    static concurrencyLimit = -1;
  }
  class Plain {}
  assert.equal(concurrencyLimitOf(Fixed), 3);
  assert.equal(concurrencyLimitOf(Dynamic), 5);
  current = 0;
  assert.equal(concurrencyLimitOf(Dynamic), 0, "read for every job: a change applies to the next one");
  assert.equal(concurrencyLimitOf(Paused), -1);
  assert.equal(concurrencyLimitOf(Plain), 0);
  assert.equal(concurrencyLimitOf(undefined), 0);
});

test("a value that is not an integer is a ConfigError naming the class", () => {
  for (const bad of [2.5, "3", Number.NaN, () => "many"]) {
    class BadLimitJob {
      static concurrencyLimit = bad;
    }
    assert.throws(
      () => concurrencyLimitOf(BadLimitJob),
      (error: unknown) =>
        error instanceof ConfigError && /job class BadLimitJob: static concurrencyLimit/.test(error.message),
    );
  }
});
