/**
 * Durable jobs in tsq/testing's fake and inline modes, where the default client's pushes go to the test
 * controller instead of Redis: journals, kept signals and parked waits live in the controller's memory
 * (`PushDiversion.memory`, forgotten by clearAll()), with the same rules as in Redis.
 *
 *   step      runs once per jid; a re-run replays its recorded result (the journal's order checks apply)
 *   sleep     ends at once (recorded, so a re-run skips it)
 *   waitFor   returns a signal already sent, times out at once with a timeout of 0, else parks the job:
 *             the execution ends as it does in a worker, and signal(event, data) from the test hands the
 *             job back to the controller (inline: it runs again before signal resolves; fake: it is
 *             held until drain)
 *
 * A step's `ctx.tx` is Redis's: using it here throws, naming startTestWorker as the way to test it.
 */
import type { ChainableCommander } from "ioredis";
import type { Client } from "../../client/Client.js";
import type { PushDiversion } from "../../client/plugin.js";
import { attachJobClass } from "../../client/jobClasses.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { ArgumentError } from "../../wire/errors.js";
import { parsePayload, type JsonValue } from "../../wire/payload.js";
import { Journal, entryText, type EntryKind } from "./Journal.js";

/** This feature's key in `PushDiversion.memory`. */
const DURABLE = Symbol("tsq.durable.memory");

interface Parked {
  readonly json: string;
  readonly klass: unknown;
  readonly stepName: string;
  readonly position: number;
}

interface DurableMemory {
  /** jid -> the journal's fields, as the Redis hash holds them. */
  readonly journals: Map<string, Record<string, string>>;
  /** event -> the last signal's data (JSON text), for waits that start later. */
  readonly signals: Map<string, string>;
  /** event -> jid -> the job parked on it. */
  readonly waiters: Map<string, Map<string, Parked>>;
}

/** The diversion taking the default client's pushes now (a test mode), if any. */
export function activeDiversion(client: Client): PushDiversion | undefined {
  const diversion = client.diversion;
  return diversion?.active ? diversion : undefined;
}

function memoryOf(diversion: PushDiversion): DurableMemory {
  let memory = diversion.memory.get(DURABLE) as DurableMemory | undefined;
  if (!memory) {
    memory = { journals: new Map(), signals: new Map(), waiters: new Map() };
    diversion.memory.set(DURABLE, memory);
  }
  return memory;
}

function noRedis(what: string): never {
  throw new ArgumentError(
    `${what} needs Redis, and tsq/testing's fake and inline modes have none: test a step that uses ctx.tx ` +
      "against a real worker (startTestWorker)",
  );
}

/** A transaction whose every command throws: a step's `ctx.tx` in test modes. */
const NO_TX = new Proxy({} as ChainableCommander, {
  get: (_target, property) => (property === "then" ? undefined : () => noRedis(`ctx.tx.${String(property)}()`)),
});

/** Stands in for the connection: only `multi()` (for a step's tx) is ever asked of it here. */
const NO_REDIS = new Proxy({} as TsqRedis, {
  get: (_target, property) =>
    property === "multi" ? () => NO_TX : property === "then" ? undefined : () => noRedis(String(property)),
});

/** A journal kept in the test controller's memory. */
export class MemoryJournal extends Journal {
  private readonly memory: DurableMemory;

  constructor(diversion: PushDiversion, jid: string, ttlSeconds?: number) {
    super(NO_REDIS, jid, ttlSeconds);
    this.memory = memoryOf(diversion);
  }

  private get stored(): Record<string, string> {
    let fields = this.memory.journals.get(this.jid);
    if (!fields) this.memory.journals.set(this.jid, (fields = {}));
    return fields;
  }

  override load(): Promise<void> {
    this.fields = { ...this.stored };
    this.index();
    return Promise.resolve();
  }

  override record(name: string, position: number, kind: EntryKind, value: JsonValue | undefined): Promise<void> {
    const text = entryText(position, kind, value);
    this.stored[`s:${name}`] = this.fields[`s:${name}`] = text;
    this.names.set(position, name);
    return Promise.resolve();
  }

  override finish(): Promise<void> {
    this.stored.done = String(Math.floor(Date.now() / 1000));
    return Promise.resolve();
  }

  /**
   * A wait's step: the data of a signal sent already (recorded), "timeout" for a timeout of 0, or
   * "parked" after noting the job (its payload and class) as waiting on `event`.
   */
  async wait(
    event: string,
    step: { name: string; position: number; timeout: number },
    job: { json: string; klass: unknown },
  ): Promise<{ data: string } | "timeout" | "parked"> {
    const data = this.memory.signals.get(event);
    if (data !== undefined) {
      await this.record(step.name, step.position, "v", JSON.parse(data) as JsonValue);
      return { data };
    }
    if (step.timeout === 0) {
      await this.record(step.name, step.position, "t", undefined);
      return "timeout";
    }
    let waiting = this.memory.waiters.get(event);
    if (!waiting) this.memory.waiters.set(event, (waiting = new Map<string, Parked>()));
    waiting.set(this.jid, { ...job, stepName: step.name, position: step.position });
    return "parked";
  }
}

/**
 * signal(event, data) in a test mode: keeps the data for later waits, records it as the step of every
 * job parked on `event`, and hands those jobs back to the controller. Resolves to how many were woken,
 * once the controller has taken them (inline: after they ran).
 */
export async function signalInMemory(diversion: PushDiversion, event: string, data: string): Promise<number> {
  const memory = memoryOf(diversion);
  memory.signals.set(event, data);
  const waiting = memory.waiters.get(event);
  memory.waiters.delete(event);
  if (!waiting) return 0;
  const woken = [...waiting].map(([jid, parked]) => {
    const fields = memory.journals.get(jid) ?? {};
    memory.journals.set(jid, fields);
    fields[`s:${parked.stepName}`] = entryText(parked.position, "v", JSON.parse(data) as JsonValue);
    const job = parsePayload(parked.json);
    attachJobClass(job, parked.klass);
    return { job, json: parked.json };
  });
  await diversion.take(woken);
  return woken.length;
}
