/**
 * Typos refused by name: unknown settings of `new Worker`/`new Client` (as `new Cluster` does), and job
 * options within 2 edits of a known one, when the class is registered and at push; other unknown job
 * options still travel as Sidekiq custom options. Through the package root, as an app imports tsq, so
 * every built-in feature's options are known.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ArgumentError, Client, ConfigError, Job, Worker } from "../../src/index.js";
import { editDistance, nearestKey } from "../../src/platform/util/unknownKeys.js";
import { useRedis } from "../helpers/redis.js";

const handle = useRedis();

class Report extends Job {
  static override options = { queue: "reports" };
  perform() {}
}

test("edit distance counts inserts, deletes, replacements and swapped neighbours, and stops past its bound", () => {
  assert.equal(editDistance("queu", "queue"), 1);
  assert.equal(editDistance("retyr", "retry"), 1); // a swap is one edit
  assert.equal(editDistance("concurency", "concurrency"), 1);
  assert.equal(editDistance("uniqeFr", "uniqueFor"), 2);
  assert.equal(editDistance("tenant", "timeout"), 3); // past the bound of 2: 3
  assert.equal(nearestKey("queue", ["queues", "redis"]), "queues");
  assert.equal(nearestKey("tenant", ["queue", "retry"]), undefined);
});

test("new Worker refuses an unknown setting by name, with the setting it is near", () => {
  const refused = (settings: object, message: RegExp) =>
    assert.throws(
      () => new Worker({ redis: handle.url, jobs: [Report], ...settings }),
      (error: unknown) => error instanceof ArgumentError && message.test(error.message),
    );
  // From JavaScript this ran on `default` with concurrency 10, silently.
  refused(
    { queue: ["reports"] },
    /^Worker: unknown setting `queue` \(did you mean `queues`\?\); the settings are redis, jobs, queues/,
  );
  refused({ concurency: 3 }, /unknown setting `concurency` \(did you mean `concurrency`\?\)/);
  refused({ colour: "blue" }, /unknown setting `colour`; the settings are/);
});

test("new Client refuses an unknown setting by name", () => {
  assert.throws(
    () => new Client({ redis: handle.url, lazyconnect: true } as object),
    /^ArgumentError: Client: unknown setting `lazyconnect` \(did you mean `lazyConnect`\?\)/,
  );
  assert.throws(
    () => new Client({ redis: handle.url, pool: 5 } as object),
    /Client: unknown setting `pool`; the settings are redis/,
  );
});

test("new Client refuses a `redis` that is neither a URL nor a connection, saying what to write", () => {
  assert.throws(
    () => new Client({ redis: { url: handle.url } } as object),
    /^ArgumentError: new Client\(options\): `redis` must be a Redis URL .* got an object with `url`: write `redis: "<url>"`$/,
  );
  for (const [redis, got] of [
    [6379, "a number"],
    [null, "null"],
    [[handle.url], "an array"],
    [{ host: "127.0.0.1", port: 6379 }, "an object with `host`, `port`"],
  ] as const)
    assert.throws(
      () => new Client({ redis } as object),
      (error: Error) => error.message.endsWith(`got ${got}`),
    );
});

test("a job option near a known one is refused when its class is registered, with the option it is near", () => {
  class Misrouted extends Job {
    // Compiles: the valid `retry` defeats TypeScript's weak-type check on an unannotated literal.
    static override options = { queu: "critical", retry: 5 };
    perform() {}
  }
  class Misretried extends Job {
    static override options = { retyr: 5, dead: true };
    perform() {}
  }
  class MisUnique extends Job {
    static override options = { uniqueFr: 60, queue: "unique" }; // a feature's option (unique jobs)
    perform() {}
  }
  for (const [klass, key, near] of [
    [Misrouted, "queu", "queue"],
    [Misretried, "retyr", "retry"],
    [MisUnique, "uniqueFr", "uniqueFor"],
  ] as const) {
    assert.throws(
      () => new Worker({ redis: handle.url, jobs: [klass] }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(
          `${klass.name}: unknown job option \`${key}\` in static options (did you mean \`${near}\`?)`,
        ),
    );
  }
});

test("at push, a near-miss job option is refused and nothing is written; custom options travel in the payload", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  class Misrouted extends Job {
    static override options = { queu: "critical", retry: 5 };
    perform() {}
  }
  await assert.rejects(
    async () => Misrouted.set({ client }).performAsync(),
    /Misrouted: unknown job option `queu` in static options \(did you mean `queue`\?\)/,
  );
  await assert.rejects(
    client.push({ class: Misrouted, args: [] }),
    /Misrouted: unknown job option `queu` in static options/,
  );
  await assert.rejects(
    async () => Report.set({ client, reslt: { ttl: 60 } } as object).performAsync(),
    /Report: unknown job option `reslt` in set\(\{\.\.\.\}\) \(did you mean `result`\?\)/,
  );
  assert.equal(await handle.redis.exists("queue:critical", "queue:default", "queue:reports"), 0, "nothing pushed");

  // Far from every known option: Sidekiq custom options (GitLab's attributes), kept in the payload.
  // snake_case spellings of known options are those options.
  class Custom extends Job {
    static override options = { queue: "custom", featureCategory: "billing", tenant: "acme", retry_queue: "low" };
    perform() {}
  }
  await Custom.set({ client, id: 7 } as object).performAsync();
  const [stored] = await handle.redis.lrange("queue:custom", 0, -1);
  const payload = JSON.parse(stored!) as Record<string, unknown>;
  assert.equal(payload.feature_category, "billing");
  assert.equal(payload.tenant, "acme");
  assert.equal(payload.retry_queue, "low");
  assert.equal(payload.id, 7);
});

test("each client knows its own plug-ins' job options: another client's list changes nothing", async (t) => {
  const withFeatures = new Client({ redis: handle.url }); // every built-in feature: `uniqueFor` is known
  const plain = new Client({ redis: handle.url, plugins: [] }); // Sidekiq OSS: `uniqueFr` is a custom option
  t.after(() => Promise.all([withFeatures.close(), plain.close()]));
  class NearUnique extends Job {
    static override options = { queue: "near", uniqueFr: 60 };
    perform() {}
  }
  await assert.rejects(
    withFeatures.push({ class: NearUnique, args: [] }),
    /NearUnique: unknown job option `uniqueFr` in static options \(did you mean `uniqueFor`\?\)/,
  );
  // Built after the client above: a process-wide union of known options would refuse it here too.
  await plain.push({ class: NearUnique, args: [] });
  const [stored] = await handle.redis.lrange("queue:near", 0, -1);
  assert.equal((JSON.parse(stored!) as Record<string, unknown>).unique_fr, 60);
});
