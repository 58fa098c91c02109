/** Unchanged fields of a parsed payload keep the exact text Ruby wrote (1.0, -0.0, big integers, escapes). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { splitTopLevel } from "../../src/wire/rawJson.js";
import { dumpPayload, parsePayload } from "../../src/wire/payload.js";
import { Client } from "../../src/client/Client.js";
import { useRedis } from "../helpers/redis.js";

const handle = useRedis();
const RUBY =
  '{"retry":true,"queue":"default","class":"A","args":[1.0,-0.0,1152921504606846977,"a\\/b \\u00e9",{"k":[1.5e+20]}],"jid":"abc","created_at":1795264707.0,"x":2.0}';

test("splitTopLevel returns each field's raw text, including nested strings with braces and escapes", () => {
  const fields = splitTopLevel('{ "a" : [1, "}]\\"", {"b": 2}] , "c":"x\\\\" ,"d":-1.0e5}');
  assert.deepEqual(
    [...fields.entries()],
    [
      ["a", '[1, "}]\\"", {"b": 2}]'],
      ["c", '"x\\\\"'],
      ["d", "-1.0e5"],
    ],
  );
});

test("a parsed payload dumps byte for byte; changed fields are re-encoded, unchanged keep their text", () => {
  const job = parsePayload(RUBY);
  assert.equal(dumpPayload(job), RUBY);
  job.retry_count = 0;
  (job.args as unknown[]).push("new");
  const dumped = dumpPayload(job);
  assert.match(dumped, /"args":\[1,0,1152921504606847000,"a\/b é",\{"k":\[150000000000000000000\]\},"new"\]/);
  assert.match(dumped, /"x":2\.0,"retry_count":0\}$/);
});

test("a job re-pushed through the client (as the poller does) keeps Ruby's argument text", async () => {
  const client = new Client({ redis: handle.url });
  await client.push(parsePayload(RUBY));
  await client.close();
  const [stored] = await handle.redis.lrange("queue:default", 0, -1);
  assert.ok(stored!.includes('"args":[1.0,-0.0,1152921504606846977,"a\\/b \\u00e9",{"k":[1.5e+20]}]'), stored);
  assert.ok(stored!.includes('"created_at":1795264707.0'));
});
