/**
 * Redis Cluster settings: `redis+cluster://` URLs and the config's `redis: { cluster: [...] }` read into
 * one URL, slot groups as hash tags, and clear errors that never show a password.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRedisUrl } from "../../../src/platform/redis/redisUrl.js";
import { clusterUrlFor, groupTag } from "../../../src/platform/redis/clusterUrl.js";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import { ShardMap } from "../../../src/platform/shards/ShardMap.js";
import { scratchDir } from "../../helpers/fixtures.js";

test("redis+cluster:// URLs: seeds, ACL user, group, TLS", () => {
  const parsed = parseRedisUrl("redis+cluster://tsq:s3cret@10.0.0.1:7000,10.0.0.2:7001/mail");
  assert.equal(parsed.kind, "cluster");
  assert.deepEqual(parsed.nodes, [
    { host: "10.0.0.1", port: 7000 },
    { host: "10.0.0.2", port: 7001 },
  ]);
  assert.equal(parsed.username, "tsq");
  assert.equal(parsed.password, "s3cret");
  assert.equal(parsed.group, "mail");
  const tls = parseRedisUrl("rediss+cluster://10.0.0.1:7000?tls_servername=redis.internal");
  assert.equal(tls.tls?.servername, "redis.internal");
  assert.equal(tls.group, undefined);
  assert.equal(groupTag("mail"), "{mail}");
  assert.equal(clusterUrlFor("redis+cluster://a:1,b:2/x?tls_ca=c", "bulk"), "redis+cluster://a:1,b:2/bulk?tls_ca=c");
  const cases: [string, RegExp][] = [
    ["redis+cluster://10.0.0.1/", /lists node "10.0.0.1"; write host:port/],
    ["redis+cluster://:pw@10.0.0.1:7000/a{b}", /names slot group "a\{b\}"/],
    ["redis+cluster://10.0.0.1:7000?tls_ca=x", /use rediss\+cluster:\/\//],
    ["redis+cluster://10.0.0.1:7000?db=1", /unknown parameter "db"/],
  ];
  for (const [url, expected] of cases)
    assert.throws(
      () => parseRedisUrl(url),
      (error: Error) => expected.test(error.message) && !error.message.includes("pw@"),
    );
});

test("redis: { cluster: [...] } in the config file becomes one redis+cluster:// URL", () => {
  const dir = scratchDir("tsq-rcluster-cfg");
  const write = (text: string) => {
    const path = join(dir, `c${Math.random()}.yml`);
    writeFileSync(path, text);
    return path;
  };
  const plain = loadConfig(
    write('redis: { cluster: ["10.0.0.1:7000", "redis://10.0.0.2:7000"], username: tsq, password: pw }\n'),
    "development",
    "tsq.yml",
  );
  assert.equal(plain.redis, "redis+cluster://tsq:pw@10.0.0.1:7000,10.0.0.2:7000");
  const tls = loadConfig(write('redis: { cluster: ["rediss://:pw2@10.0.0.1:7000"] }\n'), "development", "tsq.yml");
  assert.equal(tls.redis, "rediss+cluster://:pw2@10.0.0.1:7000");
  const grouped = loadConfig(
    write('redis: { cluster: ["10.0.0.1:7000"] }\nshards:\n  mailers: { queues: [mail, digest] }\n'),
    "development",
    "tsq.yml",
  );
  assert.deepEqual(grouped.shards, [{ name: "mailers", url: "", queues: ["mail", "digest"] }]);
  const cases: [string, RegExp][] = [
    ['redis: { cluster: ["10.0.0.1:7000"], url: "redis://x:1/0" }\n', /gives cluster with url; keep one/],
    ['redis: { cluster: ["10.0.0.1:7000"], db: 2 }\n', /database 0 only/],
    ["redis: { cluster: [] }\n", /non-empty list of Redis Cluster nodes/],
    ['redis: { cluster: ["10.0.0.1"] }\n', /non-empty list of Redis Cluster nodes/],
    ['redis_url: "redis://x:1/0"\nshards:\n  m: { queues: [mail] }\n', /shards.m needs exactly one of url or redis/],
  ];
  for (const [text, expected] of cases)
    assert.throws(
      () => loadConfig(write(text), "development", "tsq.yml"),
      (error: Error) => expected.test(error.message),
      text,
    );
});

test("on a cluster every queue is its own slot group unless a shards: entry groups it", () => {
  const map = new ShardMap("redis+cluster://10.0.0.1:7000", [{ name: "mailers", url: "", queues: ["mail"] }]);
  assert.equal(map.shardOf("default"), "default");
  assert.equal(map.shardOf("bulk"), "bulk");
  assert.equal(map.shardOf("mail"), "mailers");
  assert.equal(map.shardOf("mail:eu"), "mailers");
  assert.equal(map.urlOf("bulk"), "redis+cluster://10.0.0.1:7000/bulk");
  assert.deepEqual(map.get("bulk").queues, ["bulk"]);
  assert.throws(() => map.shardOf("a{b"), /free of "\{" and "\}"/);
  assert.throws(
    () => new ShardMap("redis+cluster://10.0.0.1:7000", [{ name: "m", url: "redis://x:1/0", queues: ["q"] }]),
    /top-level Redis is a Redis Cluster/,
  );
  assert.throws(() => new ShardMap("redis://x:1/0", [{ name: "m", url: "", queues: ["q"] }]), /needs url or redis/);
});
