/**
 * `tsqctl batches [--json]`: live batches (docs/batches.md) with their progress; `tsqctl batch <bid>
 * [--json]`: one batch in full: counts, times, dead jids and the failure records kept. Read-only.
 */
import type { Command } from "commander";
import { batchStatus, listBatches, type BatchStatus } from "../../features/flow/batches/status.js";
import {
  addJsonOption,
  addRedisUrlOption,
  positiveInteger,
  printJson,
  resolveRedisUrl,
  withRedis,
  type CliIO,
} from "./common.js";
import { NotFoundError } from "./actions.js";
import { clip, counted, table, utcTime, visible } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
  limit?: number;
}

/** The documented JSON shape (docs/admin.md): snake_case keys, absent values null. */
function toJson(s: BatchStatus): Record<string, unknown> {
  return {
    bid: s.bid,
    description: s.description,
    state: state(s),
    parent: s.parent ?? null,
    total: s.total,
    children: s.children,
    pending: s.pending,
    unrun: s.unrun,
    failures: s.failures,
    dead_jids: s.deadJids,
    failure_info: s.failureInfo,
    created_at: s.createdAt ?? null,
    complete_at: s.completeAt ?? null,
    success_at: s.successAt ?? null,
    death_at: s.deathAt ?? null,
    settled_at: s.settledAt ?? null,
    expires_at: s.expiresAt ?? null,
  };
}

function state(status: BatchStatus): string {
  if (status.success) return "succeeded";
  if (status.deadJids.length > 0) return status.settledAt !== undefined ? "dead" : "dying";
  return status.complete ? "complete" : "running";
}

export function registerBatches(program: Command, io: CliIO): void {
  const list = program
    .command("batches")
    .description("list live batches: state, total, pending, failures, description")
    .option("--limit <n>", "show at most n batches (default 100)", positiveInteger("--limit"));
  addRedisUrlOption(addJsonOption(list)).action(async (flags: Flags) => {
    const rows = await withRedis(resolveRedisUrl(flags.redisUrl, io), (r) => listBatches(r, flags.limit ?? 100));
    if (flags.json) return printJson(io, rows.map(toJson));
    if (rows.length === 0) return io.out("no live batches\n");
    const lines = table(
      ["BID", "STATE", "TOTAL", "PENDING", "FAILURES", "DEAD", "CREATED (UTC)", "DESCRIPTION"],
      rows.map((s) => [
        s.bid,
        state(s),
        String(s.total),
        String(s.pending),
        String(s.failures),
        String(s.deadJids.length),
        s.createdAt === undefined ? "-" : utcTime(s.createdAt),
        clip(s.description, 40),
      ]),
      new Set([2, 3, 4, 5]),
    );
    io.out(`${lines.join("\n")}\n`);
  });

  const one = program
    .command("batch")
    .description("show one batch: counts, times, dead jids, failures")
    .argument("<bid>");
  addRedisUrlOption(addJsonOption(one)).action(async (bid: string, flags: Flags) => {
    const status = await withRedis(resolveRedisUrl(flags.redisUrl, io), (r) => batchStatus(r, bid));
    if (!status) throw new NotFoundError(`no batch ${bid} (it expired after its linger, or never existed)`);
    if (flags.json) return printJson(io, toJson(status));
    const time = (t: number | undefined) => (t === undefined ? "-" : utcTime(t));
    const lines = [
      `bid          ${status.bid}`,
      `description  ${status.description}`,
      `state        ${state(status)}`,
      `parent       ${status.parent ?? "-"}`,
      `total        ${counted(status.total, "job")}, ${counted(status.children, "child batch", "child batches")}`,
      `pending      ${status.pending}   (not run yet: ${status.unrun})`,
      `failures     ${status.failures}`,
      `created      ${time(status.createdAt)}`,
      `complete     ${time(status.completeAt)}`,
      `success      ${time(status.successAt)}`,
      `death        ${time(status.deathAt)}`,
      `expires      ${time(status.expiresAt)}`,
      `dead jids    ${status.deadJids.join(" ") || "-"}`,
      ...Object.entries(status.failureInfo).map(
        ([jid, info]) => `failure      ${jid} ${clip(JSON.stringify(info), 100)}`,
      ),
    ];
    io.out(`${lines.map(visible).join("\n")}\n`);
  });
}
