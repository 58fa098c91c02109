/**
 * Redis URL forms (redis://, rediss:// with TLS files, redis+sentinel://), the config file's `redis:`
 * block that turns into one, and the masking of every secret they carry.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import { ConfigError } from "../../../src/wire/errors.js";
import { connectionOptions, parseRedisUrl, redactRedisUrl } from "../../../src/platform/redis/redisUrl.js";
import { explainTlsError } from "../../../src/platform/redis/tls.js";
import { redactText } from "../../../src/platform/secrets.js";

const dir = mkdtempSync(join(tmpdir(), "tsq-redisUrl-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("redis:// with an ACL user and a lone password", () => {
  assert.deepEqual(parseRedisUrl("redis://tsq:s%40cret-1@10.0.0.5:6380/3"), {
    kind: "redis",
    host: "10.0.0.5",
    port: 6380,
    db: 3,
    username: "tsq",
    password: "s@cret-1",
  });
  assert.equal(parseRedisUrl("redis://:only-pass@host").password, "only-pass");
  assert.equal(parseRedisUrl("redis://lone-secret@host").password, "lone-secret");
  assert.equal(parseRedisUrl("redis://host").port, 6379);
});

test("redis+sentinel:// lists Sentinels, the master name, the db and the Sentinel credentials", () => {
  const parsed = parseRedisUrl(
    "redis+sentinel://:data-pass@10.0.0.1:26379,10.0.0.2:26380,s3/mymaster/2?sentinel_password=sent-pass&sentinel_username=watcher",
  );
  assert.deepEqual(parsed.sentinels, [
    { host: "10.0.0.1", port: 26379 },
    { host: "10.0.0.2", port: 26380 },
    { host: "s3", port: 26379 },
  ]);
  assert.equal(parsed.masterName, "mymaster");
  assert.equal(parsed.db, 2);
  assert.equal(parsed.password, "data-pass");
  const options = connectionOptions(parsed);
  assert.equal(options.name, "mymaster");
  assert.equal(options.role, "master");
  assert.equal(options.sentinelPassword, "sent-pass");
  assert.equal(options.sentinelUsername, "watcher");
  assert.equal(parseRedisUrl("redis+sentinel://h:1/m").db, 0);
});

test("bad URLs name the problem", () => {
  assert.throws(() => parseRedisUrl("redis+sentinel://h1:1,h2:2"), /master-name/);
  assert.throws(() => parseRedisUrl("redis+sentinel://h1:1/m?tls_ca=/x"), /unknown parameter "tls_ca"/);
  assert.throws(() => parseRedisUrl("redis://h/db1"), /database "db1"/);
  assert.throws(() => parseRedisUrl("redis://h?tls_ca=/x"), /use rediss:\/\/ for TLS/);
  assert.throws(() => parseRedisUrl("rediss://h?tls_cafile=/x"), /unknown parameter "tls_cafile"/);
  assert.throws(() => parseRedisUrl("http://h"), ConfigError);
});

test("rediss:// reads its TLS files and explains a missing one", () => {
  const ca = join(dir, "ca.pem");
  writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  const options = connectionOptions(parseRedisUrl(`rediss://h.example:6380?tls_ca=${ca}`)) as {
    tls: { ca: Buffer; servername?: string };
  };
  assert.match(options.tls.ca.toString(), /BEGIN CERTIFICATE/);
  assert.equal(options.tls.servername, "h.example");
  assert.throws(
    () => connectionOptions(parseRedisUrl(`rediss://h?tls_key=${join(dir, "nope.key")}`)),
    /cannot read the Redis TLS client key file .*nope\.key \(ENOENT\); check tls_key/,
  );
});

test("every secret a URL carries is masked, registered or not", () => {
  const url = "redis+sentinel://tsq:data-Secret@h:1/m?sentinel_password=sentinel-Secret";
  assert.equal(redactRedisUrl(url), "redis+sentinel://tsq:***@h:1/m?sentinel_password=***");
  parseRedisUrl(url);
  assert.equal(redactText("got data-Secret and sentinel-Secret"), "got *** and ***");
  assert.doesNotMatch(redactText("x rediss://h?tls_key_passphrase=unregistered-pp&tls_ca=/a"), /unregistered-pp/);
});

test("a certificate error is explained: what happened and what to do", () => {
  const error = Object.assign(new Error("self-signed certificate in certificate chain"), {
    code: "SELF_SIGNED_CERT_IN_CHAIN",
  });
  assert.match(explainTlsError(error)!, /TLS certificate problem.*give the CA that signed it with tls_ca/);
  assert.equal(explainTlsError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })), undefined);
});

function configFile(text: string): string {
  const path = join(dir, `tsq-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(path, text);
  return path;
}

test("the redis: block becomes one URL, with TLS files and credentials", () => {
  const settings = loadConfig(
    configFile(
      [
        "redis:",
        "  url: rediss://redis.internal:6380/0",
        "  username: tsq",
        "  password: 'p@ss:word'",
        "  db: 4",
        "  tls: { ca: /etc/tsq/ca.pem, cert: /etc/tsq/client.pem, key: /etc/tsq/client.key, passphrase: key-phrase-1 }",
      ].join("\n"),
    ),
    "production",
  );
  const parsed = parseRedisUrl(settings.redis!);
  assert.equal(parsed.username, "tsq");
  assert.equal(parsed.password, "p@ss:word");
  assert.equal(parsed.db, 4);
  assert.deepEqual(parsed.tls, {
    ca: "/etc/tsq/ca.pem",
    cert: "/etc/tsq/client.pem",
    key: "/etc/tsq/client.key",
    passphrase: "key-phrase-1",
  });
  assert.equal(redactText(settings.redis!).includes("key-phrase-1"), false);
});

test("the redis: block with a sentinel section", () => {
  const settings = loadConfig(
    configFile(
      [
        "redis:",
        "  password: data-pass-2",
        "  sentinel:",
        "    master_name: mymaster",
        '    sentinels: ["10.0.0.1:26379", "10.0.0.2:26379"]',
        "    password: sentinel-pass-2",
      ].join("\n"),
    ),
    "production",
  );
  const parsed = parseRedisUrl(settings.redis!);
  assert.equal(parsed.kind, "sentinel");
  assert.equal(parsed.masterName, "mymaster");
  assert.equal(parsed.password, "data-pass-2");
  assert.equal(parsed.sentinelPassword, "sentinel-pass-2");
  assert.equal(parsed.sentinels!.length, 2);
});

test("a bad redis: block is refused without echoing a password", () => {
  assert.throws(
    () => loadConfig(configFile("redis:\n  password: 12345678\n  url: redis://h\n"), "x"),
    (error: Error) => {
      assert.match(error.message, /redis\.password must be a non-empty string \(its value is not shown/);
      assert.doesNotMatch(error.message, /12345678/);
      return true;
    },
  );
  assert.throws(
    () => loadConfig(configFile("redis:\n  url: redis://h\n  tls: { ca: /x }\n"), "x"),
    /redis\.tls is set but url is not rediss:\/\//,
  );
  assert.throws(
    () => loadConfig(configFile("redis:\n  sentinel: { master_name: m, sentinels: [h1] }\n"), "x"),
    /"host:port" Sentinel addresses/,
  );
  assert.throws(() => loadConfig(configFile("redis:\n  urll: redis://h\n"), "x"), /unknown key "redis.urll"/);
});
