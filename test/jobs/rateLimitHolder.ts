/**
 * Takes a lease of `Limiter.concurrent(<name>, 1, { lockTimeout: <s> })` and holds it until killed: the
 * kill -9 test's holder. Usage: node rateLimitHolder.js <redis url> <name> <lockTimeout s>
 */
import { Client, Limiter, configureClient } from "../../src/index.js";

const [url, name, lockTimeout] = process.argv.slice(2);
const client = new Client({ redis: url! });
configureClient(client);
const mutex = Limiter.concurrent(name!, 1, { lockTimeout: Number(lockTimeout) });
await mutex.withinLimit(async () => {
  process.stdout.write("held\n");
  await new Promise(() => undefined); // until SIGKILL
});
