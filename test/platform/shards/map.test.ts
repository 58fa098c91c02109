/**
 * Which shard owns a queue, how `shards:` is checked, and how `tsq-cluster` groups pick their shard
 * (src/platform/shards). Pure: no Redis.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ShardMap } from "../../../src/platform/shards/ShardMap.js";
import { resolveShardedGroups } from "../../../src/cluster/shardGroups.js";
import { checkGroup } from "../../../src/cluster/groups.js";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import { resolveWorkerOptions } from "../../../src/options/workerOptions.js";
import { ConfigError } from "../../../src/wire/errors.js";
import { scratchDir } from "../../helpers/fixtures.js";

const ONE = "redis://127.0.0.1:20001/0";
const TWO = "redis://:s3cret-shard@127.0.0.1:20002/0";

const map = () =>
  new ShardMap(ONE, [
    { name: "bulk", url: TWO, queues: ["bulk", "export", "export:daily:eu"] },
    { name: "mail", url: "redis://127.0.0.1:20003/0", queues: ["mail"] },
  ]);

test("a queue belongs to the shard listing it, or its namespace's; every other queue to the default", () => {
  const m = map();
  assert.equal(m.shardOf("bulk"), "bulk");
  assert.equal(m.shardOf("export:daily"), "bulk"); // namespace of a listed queue
  assert.equal(m.shardOf("export:daily:eu:x"), "bulk");
  assert.equal(m.shardOf("mail"), "mail");
  assert.equal(m.shardOf("mailer"), "default"); // a prefix that is not a namespace
  assert.equal(m.shardOf("default"), "default");
  assert.equal(m.shardOf("bulkexport"), "default");
  assert.deepEqual(m.names(), ["default", "bulk", "mail"]);
  assert.equal(m.urlOf("bulk"), TWO);
  assert.equal(new ShardMap(ONE).sharded, false);
  assert.equal(m.sharded, true);
});

test("overlapping, empty, unknown and reserved shards are refused with what to do", () => {
  assert.throws(
    () =>
      new ShardMap(ONE, [
        { name: "a", url: TWO, queues: ["x"] },
        { name: "b", url: TWO, queues: ["x"] },
      ]),
    /queue "x" is listed by shards a and b; a queue lives on one shard/,
  );
  assert.throws(() => new ShardMap(ONE, [{ name: "a", url: TWO, queues: [] }]), /shards.a lists no queues/);
  assert.throws(() => map().get("nope"), /there is no shard "nope"; the shards are default, bulk, mail/);
  assert.throws(
    () => map().checkServes("default", ["critical", "bulk"]),
    (error: Error) =>
      error instanceof ConfigError &&
      /queue "bulk" lives on shard bulk \(redis:\/\/:\*\*\*@127.0.0.1:20002\/0\) but this process serves shard default; serve it from a process with --shard bulk/.test(
        error.message,
      ) &&
      !error.message.includes("s3cret-shard"),
  );
});

test("shards: in the config file is checked, naming the key, without showing passwords", () => {
  const dir = scratchDir("tsq-shards-cfg");
  const write = (text: string) => {
    const path = join(dir, `c${Math.random()}.yml`);
    writeFileSync(path, text);
    return path;
  };
  const ok = loadConfig(write(`shards:\n  bulk:\n    url: ${TWO}\n    queues: [bulk]\n`), "development", "tsq.yml");
  assert.deepEqual(ok.shards, [{ name: "bulk", url: TWO, queues: ["bulk"] }]);
  const cases: [string, RegExp][] = [
    [
      "shards:\n  default: { url: redis://127.0.0.1:1/0, queues: [a] }\n",
      /shards.default: "default" is the top-level Redis/,
    ],
    ["shards:\n  bulk: { queues: [a] }\n", /shards.bulk needs exactly one of url or redis/],
    ["shards:\n  bulk: { url: redis://127.0.0.1:1/0 }\n", /shards.bulk.queues is missing/],
    [
      "shards:\n  bulk: { url: 'http://:pw-in-url@x/0', queues: [a] }\n",
      /shards.bulk.url must be .*got http:\/\/:\*\*\*@x\/0/,
    ],
    ["shards:\n  bulk: { url: redis://127.0.0.1:1/0, queues: [a], extra: 1 }\n", /unknown key "shards.bulk.extra"/],
    ["shards:\n  'b k': { url: redis://127.0.0.1:1/0, queues: [a] }\n", /a shard name uses letters, digits/],
  ];
  for (const [text, expected] of cases) {
    assert.throws(
      () => loadConfig(write(text), "development", "tsq.yml"),
      (error: Error) => expected.test(error.message) && !error.message.includes("pw-in-url"),
      text,
    );
  }
});

test("tsq --shard serves that shard's Redis and queues; a queue of another shard is refused at startup", () => {
  const dir = scratchDir("tsq-shards-opts");
  const config = join(dir, "tsq.yml");
  writeFileSync(config, `redis_url: ${ONE}\nshards:\n  bulk: { url: "${TWO}", queues: [bulk, export] }\n`);
  const served = resolveWorkerOptions(["-C", config, "--shard", "bulk"], {}, dir).options;
  assert.equal(served.redisUrl, TWO);
  assert.equal(served.shard, "bulk");
  assert.deepEqual(
    served.capsules.map((c) => c.queues.map((q) => q.name)),
    [["bulk", "export"]],
  );
  const plain = resolveWorkerOptions(["-C", config], {}, dir).options;
  assert.equal(plain.redisUrl, ONE);
  assert.throws(
    () => resolveWorkerOptions(["-C", config, "-q", "bulk"], {}, dir),
    /queue "bulk" lives on shard bulk .* but this process serves shard default/,
  );
  assert.throws(
    () => resolveWorkerOptions(["-C", config, "--shard", "nope"], {}, dir),
    /there is no shard "nope"; the shards are default, bulk/,
  );
});

test("cluster groups: an @shard suffix, a shard taken from the queues, and a group spanning shards", () => {
  const m = map();
  const known = ["a", "b", "bulk", "export", "export:weekly", "mail", "default"];
  const resolved = resolveShardedGroups(["a,b", "bulk,export", "*@bulk", "mail", "*"], known, m, "default");
  assert.deepEqual(
    resolved.map((g) => [g.shard, g.queues.map((q) => q.name)]),
    [
      ["default", ["a", "b"]],
      ["bulk", ["bulk", "export", "export:weekly"]],
      ["bulk", ["bulk", "export", "export:weekly"]],
      ["mail", ["mail"]],
      ["default", ["a", "b", "default"]],
    ],
  );
  assert.throws(
    () => resolveShardedGroups(["a,bulk"], known, m, "default"),
    /queue group 0 \("a,bulk"\) has queues on shards default \(a\) and bulk \(bulk\); a child serves one shard: split the group, or add @<shard>/,
  );
  assert.throws(
    () => resolveShardedGroups(["mail@bulk"], known, m, "default"),
    /queue "mail" lives on shard mail .* but queue group 0 \("mail@bulk"\) serves shard bulk/,
  );
  assert.throws(() => resolveShardedGroups(["a@nope"], known, m, "default"), /names shard "nope"/);
  assert.throws(() => checkGroup("a,b@", 0), /ends in "@"; name a shard after it/);
  checkGroup("urgency=high@bulk", 0); // a query may name its shard too
});
