/**
 * A feature's Client settings are its plug-in's: named in `clientSettings`, typed by its `declare module`
 * on ClientOptions, handed to its client hooks as given, and refused as unknown by a Client without it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../src/client/Client.js";
import { definePlugin } from "../../src/server/plugin.js";
import { reliablePush } from "../../src/features/flow/reliable-push/plugin.js";
import { ArgumentError } from "../../src/wire/errors.js";

test("a plug-in's client setting reaches its hooks as given; a Client without that plug-in refuses it by name", async () => {
  const seen: Record<string, unknown>[] = [];
  const sink = definePlugin({
    name: "sink",
    clientSettings: ["sinkTarget"],
    client({ settings }) {
      seen.push({ ...settings });
      return undefined;
    },
  });
  const given = { topic: "audit", retries: 2 };
  const clients = [
    new Client({ lazyConnect: true, plugins: [sink], sinkTarget: given } as object),
    new Client({ lazyConnect: true, plugins: [sink] }),
  ];
  await Promise.all(clients.map((client) => client.close()));
  assert.deepEqual(seen, [{ sinkTarget: given }, {}], "as given, and absent when not given");
  assert.equal(seen[0]!.sinkTarget, given, "the same object, not a copy");

  assert.throws(
    () => new Client({ lazyConnect: true, plugins: [], sinkTarget: given } as object),
    (error: unknown) =>
      error instanceof ArgumentError &&
      /^Client: unknown setting `sinkTarget`; the settings are redis/.test(error.message),
  );
  // A built-in feature's setting is the same: `reliablePush` is known only to a Client that runs it.
  assert.throws(
    () => new Client({ lazyConnect: true, plugins: [], reliablePush: true }),
    /unknown setting `reliablePush`/,
  );
  const reliable = new Client({ lazyConnect: true, plugins: [reliablePush], reliablePush: { maxBuffered: 5 } });
  await reliable.close();
});
