/**
 * A separate pushing process for the lock race tests (deduplication, unique jobs): its own Client,
 * `count` pushes of the same job fired at once when the test says go (BLPOP go), then one JSON line with
 * every returned jid (null for a refused push).
 *
 *   node dist/test/jobs/racePusher.js <jobs module> <ClassName> <count>     (REDIS_URL names the Redis)
 *
 * The jobs module is a file name in this folder (dedupJobs.js, uniqueJobs.js).
 */
import { Client } from "../../src/index.js";

const [moduleName, className, countText] = process.argv.slice(2);
if (!/^[A-Za-z]+\.js$/.test(moduleName ?? "")) throw new Error(`bad jobs module ${moduleName}`);
const jobs = (await import(`./${moduleName}`)) as Record<string, unknown>;
const klass = jobs[className ?? ""];
if (typeof klass !== "function") throw new Error(`unknown class ${className}`);
const client = new Client({ redis: process.env.REDIS_URL });
await client.redis.ping();
process.stdout.write("ready\n");
const go = client.redis.duplicate();
await go.blpop("go", 30);
go.disconnect();
const jids = await Promise.all(
  Array.from({ length: Number(countText) }, () => client.push({ class: klass, args: [1] })),
);
process.stdout.write(`${JSON.stringify(jids)}\n`);
await client.close();
