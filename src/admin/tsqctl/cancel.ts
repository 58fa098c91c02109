/**
 * `tsqctl cancel <jid> [--json]`: cancels any job (src/features/durable/cancel.ts): removed from its
 * queue, `schedule` or `retry`; a running one is aborted through its tsq owner's channel. An iterable
 * job is also marked as Ruby's `Sidekiq::Client#cancel!(jid)` does (HSETNX it-<jid> cancelled <now>,
 * 30-day expiry), so it stops at its next state save even on a Ruby process. The text output leads with
 * what happened to every job; the iterable line only for a job known to be iterable (a saved iteration).
 */
import { InvalidArgumentError, type Command } from "commander";
import { iterationKey } from "../../wire/keys.js";
import { cancelIterable } from "../../features/iterable/state.js";
import { cancel as cancelJob } from "../../features/durable/cancel.js";
import { visible } from "./format.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

function jidArgument(text: string): string {
  if (!/^[\w.:-]{1,100}$/.test(text)) {
    throw new InvalidArgumentError("expected a job id such as 3f9a0c1d2e4b5a6978c0d1e2 (letters, digits, - _ . :).");
  }
  return text;
}

export function registerCancel(program: Command, io: CliIO): void {
  const cancel = program
    .command("cancel")
    .description(
      "cancel a job: removed from its queue, schedule or retries; a running one is aborted (iterable jobs: Sidekiq's Client#cancel!)",
    )
    .argument("<jid>", "the job's jid", jidArgument);
  addRedisUrlOption(addJsonOption(cancel)).action(async (jid: string, flags: Flags) => {
    const { cancelledAt, started, job } = await withRedis(resolveRedisUrl(flags.redisUrl, io), async (redis) => {
      const at = await cancelIterable(redis, jid);
      const job = await cancelJob(jid, { redis });
      return { cancelledAt: at, started: (await redis.hexists(iterationKey(jid), "ex")) === 1, job };
    });
    if (flags.json)
      return printJson(io, {
        jid,
        cancelled_at: cancelledAt,
        started,
        removed: job.removed,
        running_on: job.runningOn ?? null,
        notified: job.notified,
      });
    const when = new Date(cancelledAt * 1000).toISOString();
    io.out(`${jid}: cancelled at ${when}\n`);
    if (job.removed.length > 0) io.out(`${jid}: removed from ${job.removed.join(", ")}\n`);
    if (job.runningOn)
      io.out(
        `${jid}: running on ${visible(job.runningOn)}; ${job.notified ? "told to stop" : "not a tsq process: it finishes this run"}\n`,
      );
    if (job.removed.length === 0 && !job.runningOn) {
      // Not seen running yet (heartbeats lag up to one interval): every tsq process was told.
      if (job.notified > 0)
        io.out(`${jid}: not in a work hash; told every tsq process (${job.notified}): the one running it stops it\n`);
      else if (!started)
        io.out(
          `${jid}: not found queued, scheduled, retrying or running; a durable or iterable job that shows up ` +
            "later ends without running (the mark lasts 1 hour, or as long as the durable job's journal; 30 days for an iterable job)\n",
        );
    }
    // Only a job with a saved iteration is known to be iterable; for any other the mark is silent.
    if (started) io.out(`${jid}: an iterable job: it stops at its next state save (within 5 s by default)\n`);
  });
}
