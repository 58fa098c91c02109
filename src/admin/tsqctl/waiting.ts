/**
 * `tsqctl waiting [--limit n] [--json]`: durable jobs parked in `schedule` (src/admin/api/ParkedJobs.ts):
 * those waiting on an event (what for, since when, until when) and those sleeping (until when).
 * Read-only. Event names and classes are text from Redis: shown through `visible`.
 */
import type { Command } from "commander";
import { ParkedJobs, type ParkedList } from "../api/ParkedJobs.js";
import {
  addJsonOption,
  addRedisUrlOption,
  positiveInteger,
  printJson,
  resolveRedisUrl,
  withRedis,
  type CliIO,
} from "./common.js";
import { clip, relative, table, utcTime, visible } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
  limit?: number;
}

/** The documented JSON shape: snake_case keys, times in epoch seconds. */
function toJson(list: ParkedList): Record<string, unknown> {
  return {
    waiting: list.waiting.map((w) => ({
      jid: w.jid,
      class: w.class,
      queue: w.queue,
      event: w.event,
      since: w.since,
      deadline: w.deadline,
    })),
    sleeping: list.sleeping.map((s) => ({ jid: s.jid, class: s.class, queue: s.queue, wake_at: s.wakeAt })),
    truncated: list.truncated,
  };
}

function printList(io: CliIO, list: ParkedList, now: number): void {
  const cell = (text: string, width: number) => clip(visible(text), width);
  if (list.waiting.length === 0) io.out("no durable job waiting on an event\n");
  else {
    const rows = list.waiting.map((w) => [
      w.jid,
      cell(w.class, 30),
      cell(w.event, 40),
      `${utcTime(w.since)} (${relative(w.since, now)})`,
      w.deadline === 0 ? "signalled: due at the next poll" : `${utcTime(w.deadline)} (${relative(w.deadline, now)})`,
    ]);
    io.out(`waiting on an event (${list.waiting.length}):\n`);
    io.out(`${table(["JID", "CLASS", "EVENT", "SINCE", "DEADLINE"], rows).join("\n")}\n`);
  }
  if (list.sleeping.length === 0) io.out("no durable job sleeping\n");
  else {
    const rows = list.sleeping.map((s) => [
      s.jid,
      cell(s.class, 30),
      `${utcTime(s.wakeAt)} (${relative(s.wakeAt, now)})`,
    ]);
    io.out(`sleeping (${list.sleeping.length}):\n`);
    io.out(`${table(["JID", "CLASS", "WAKES"], rows).join("\n")}\n`);
  }
  if (list.truncated) io.out("(more are parked than --limit shows)\n");
}

export function registerWaiting(program: Command, io: CliIO): void {
  const command = program
    .command("waiting")
    .description("list durable jobs waiting on an event (event, since, deadline) and sleeping (wake time)")
    .option("--limit <n>", "show at most n jobs of each kind (default 100)", positiveInteger("--limit"));
  addRedisUrlOption(addJsonOption(command)).action(async (flags: Flags) => {
    const list = await withRedis(resolveRedisUrl(flags.redisUrl, io), (redis) =>
      new ParkedJobs(redis).list({ limit: flags.limit ?? 100 }),
    );
    if (flags.json) return printJson(io, toJson(list));
    printList(io, list, Date.now() / 1000);
  });
}
