/**
 * `tsqctl cancel <jid> [--json]`: cancels an iterable job, as Ruby's `Sidekiq::Client#cancel!(jid)`
 * (HSETNX it-<jid> cancelled <now>, 30-day expiry). The job stops at its next state save (within its
 * `stateFlushInterval`, 5 s by default), or as soon as it starts when it is not running yet.
 */
import { InvalidArgumentError, type Command } from "commander";
import { iterationKey } from "../../wire/keys.js";
import { cancelIterable } from "../../features/iterable/state.js";
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
    .description("cancel an iterable job: it stops at its next state save (Sidekiq's Client#cancel!)")
    .argument("<jid>", "the job's jid", jidArgument);
  addRedisUrlOption(addJsonOption(cancel)).action(async (jid: string, flags: Flags) => {
    const { cancelledAt, started } = await withRedis(resolveRedisUrl(flags.redisUrl, io), async (redis) => {
      const at = await cancelIterable(redis, jid);
      return { cancelledAt: at, started: (await redis.hexists(iterationKey(jid), "ex")) === 1 };
    });
    if (flags.json) return printJson(io, { jid, cancelled_at: cancelledAt, started });
    const when = new Date(cancelledAt * 1000).toISOString();
    io.out(
      started
        ? `${jid}: cancelled at ${when}; the job stops at its next state save (within 5 s by default)\n`
        : `${jid}: cancelled at ${when}; no iteration has been saved yet, so the job stops when it starts ` +
            "(the mark lasts 30 days; a jid that is not an iterable job ignores it)\n",
    );
  });
}
