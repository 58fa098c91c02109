// Part (b) of `npm run bench:durable`: `n` durable jobs waiting on events and `n` sleeping, parked by an
// in-process worker of concurrency 5 with the default scheduled poll (every 2.5 to 7.5 s). A signal
// pushes its job onto its queue at once; a sleeper is moved when its wake time comes (the parking
// process's alarm), so both latencies are bound by how fast 5 slots resume jobs, not by the poll.
//
//   waiters   n/10 events signalled before their jobs are pushed (each must get its data at once, without
//             parking); then n jobs parked on their own event; memory; 1,000 plain jobs served while they
//             are parked; every event signalled with its send time: signal-to-start latency (from the
//             signal to the start of the resumed execution).
//   sleepers  n jobs sleeping until a whole second spread over a window that the worker can drain in
//             time (set from the waiters' park rate); memory; 1,000 plain jobs; wake lateness (from the
//             wake time to the start of the resumed execution).
// Memory per parked job = (INFO used_memory after parking - before) / jobs parked: journal, schedule entry
// and, for waiters, the event's waiters hash.
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import type { Client } from "../../src/client/Client.js";
import { DurableJob } from "../../src/features/durable/DurableJob.js";
import { signal } from "../../src/features/durable/signal.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { builtinPlugins } from "../../src/plugins.js";
import { inFlight, inProcessWorkerOptions, percentile, sleep, table } from "./lib.js";

/** What the jobs saw, in this process (the worker runs in it). */
class Record {
  started = new Set<string>();
  parkedLate = 0;
  earlyDelivered = 0;
  lateness: number[] = []; // ms
  latency: number[] = []; // ms
  plain = 0;
}
const seen = new Record();

export class SleeperBenchJob extends DurableJob {
  async perform(wakeAtMs: number): Promise<void> {
    const start = Date.now();
    const first = !seen.started.has(this.jid);
    seen.started.add(this.jid);
    await this.sleepUntil(wakeAtMs, "nap");
    if (first)
      seen.parkedLate++; // its wake time passed before it could park
    else seen.lateness.push(start - wakeAtMs);
  }
}

export class WaiterBenchJob extends DurableJob {
  async perform(event: string): Promise<void> {
    const start = Date.now();
    const first = !seen.started.has(this.jid);
    seen.started.add(this.jid);
    const data = await this.waitFor<{ sentAt: number; early?: boolean }>(event, { timeout: 3600 });
    if (data.early) {
      if (first) seen.earlyDelivered++;
    } else seen.latency.push(start - data.sentAt);
  }
}

export class OtherWorkBenchJob {
  perform(): void {
    seen.plain++;
  }
}

async function usedMemory(client: Client): Promise<number> {
  const info = await client.redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

async function until(what: string, check: () => boolean | Promise<boolean>, minutes = 20): Promise<number> {
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > minutes * 60_000) throw new Error(`${what}: not reached in ${minutes} min`);
    await sleep(50);
  }
  return (performance.now() - t0) / 1000;
}

/** 1,000 plain jobs pushed while the durable jobs are parked: seconds until all ran. */
async function otherWork(client: Client): Promise<number> {
  const before = seen.plain;
  await client.pushBulk({ class: OtherWorkBenchJob, args: Array.from({ length: 1000 }, () => []) });
  return until("1,000 plain jobs while parked", () => seen.plain - before === 1000);
}

const ms = (xs: number[], p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  ).toFixed(0);

export async function parkedBench(url: string, client: Client, n: number): Promise<void> {
  await client.redis.flushdb();
  const registry = new Registry();
  for (const klass of [SleeperBenchJob, WaiterBenchJob, OtherWorkBenchJob]) registry.register(klass);
  const launcher = new Launcher(inProcessWorkerOptions(url, 5), registry, {
    logger: pino({ level: process.env.TSQ_BENCH_LOG ?? "silent" }),
    plugins: builtinPlugins(),
  });
  await launcher.start();
  try {
    // The poller's first poll comes 10 to 15 s after the start (Poller.ts INITIAL_WAIT): measure from then.
    await sleep(15_000);
    const early = Math.max(1, Math.floor(n / 10));
    await inFlight(early, (i) => signal(`early:${i}`, { sentAt: Date.now(), early: true }, { redis: client.redis }));
    await client.pushBulk({ class: WaiterBenchJob, args: Array.from({ length: early }, (_, i) => [`early:${i}`]) });
    await until("early-signalled waiters done", async () => seen.earlyDelivered === early);
    const earlyLeft = await client.redis.zcard("schedule");

    const m0 = await usedMemory(client);
    const t0 = performance.now();
    await client.pushBulk({ class: WaiterBenchJob, args: Array.from({ length: n }, (_, i) => [`ev:${i}`]) });
    await until("waiters parked", async () => (await client.redis.zcard("schedule")) === n);
    const parkSeconds = (performance.now() - t0) / 1000;
    const waiterBytes = ((await usedMemory(client)) - m0) / n;
    const waiterOther = await otherWork(client);
    await inFlight(n, (i) => signal(`ev:${i}`, { sentAt: Date.now() }, { redis: client.redis }));
    await until("waiters resumed", () => seen.latency.length === n);

    // Sleepers wake spread over a window the worker can drain at its park rate, after they are all parked.
    const rate = n / parkSeconds;
    const margin = Math.ceil(2 * parkSeconds) + 20; // s: parking, memory and 1,000 plain jobs
    const spread = Math.ceil((2 * n) / rate) + 10; // s
    const wakeFrom = Math.ceil(Date.now() / 1000) + margin;
    const wakes = Array.from({ length: n }, () => (wakeFrom + Math.floor(Math.random() * spread)) * 1000);
    const m1 = await usedMemory(client);
    await client.pushBulk({ class: SleeperBenchJob, args: wakes.map((at) => [at]) });
    await until("sleepers parked", async () => (await client.redis.zcard("schedule")) === n);
    const sleeperBytes = ((await usedMemory(client)) - m1) / n;
    const sleeperOther = await otherWork(client);
    const sleptBeforeWake = Date.now() < wakeFrom * 1000;
    await until("sleepers woke", () => seen.lateness.length + seen.parkedLate === n);

    console.log(
      `\n(b) ${n.toLocaleString("en-US")} waiting + ${n.toLocaleString("en-US")} sleeping durable jobs, ` +
        `in-process worker, concurrency 5, default scheduled poll (2.5 to 7.5 s) and wake alarms`,
    );
    console.log(
      table(
        ["parked", "bytes per job", "1,000 plain jobs while parked", "p50 ms", "p99 ms", "max ms", "notes"],
        [
          [
            "waiting on an event",
            waiterBytes.toFixed(0),
            `${waiterOther.toFixed(1)} s`,
            ms(seen.latency, 50),
            ms(seen.latency, 99),
            ms(seen.latency, 100),
            `signal to start; parked at ${rate.toFixed(0)} jobs/s`,
          ],
          [
            "sleeping",
            sleeperBytes.toFixed(0),
            `${sleeperOther.toFixed(1)} s`,
            ms(seen.lateness, 50),
            ms(seen.lateness, 99),
            ms(seen.lateness, 100),
            `wake lateness; wakes spread over ${spread} s; ${seen.parkedLate} parked after their wake time; ` +
              `all parked before the first wake: ${sleptBeforeWake ? "yes" : "no"}`,
          ],
        ],
      ),
    );
    console.log(
      `signals sent before the wait: ${seen.earlyDelivered} / ${early} delivered at once (no park; ${earlyLeft} left in schedule)`,
    );
  } finally {
    await launcher.stop();
  }
}
