/**
 * Queue pausing from the command line (Sidekiq Pro's `Queue#pause!` / `#unpause!`, same `paused` set):
 *
 *   tsqctl pause <queue>     every tsq worker stops fetching from the queue within 1 s; pushes still land
 *   tsqctl unpause <queue>   workers fetch from it again within 1 s
 *
 * `tsqctl queues` shows which queues are paused.
 */
import { InvalidArgumentError, type Command } from "commander";
import { Queue } from "../api/index.js";
import { POLL_INTERVAL } from "../../server/fetch/PausedQueues.js";
import { addJsonOption, addRedisUrlOption, printJson, withRedis, type CliIO } from "./common.js";
import { queueUrl } from "./shards.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

function queueName(text: string): string {
  const name = text.startsWith("queue:") ? text.slice("queue:".length) : text;
  if (name.trim() === "") throw new InvalidArgumentError("the queue name must not be empty, e.g. default.");
  return name;
}

const NOTICE = `workers apply it within ${(2 * POLL_INTERVAL) / 1000} s`;

export function registerPause(program: Command, io: CliIO): void {
  const pause = program
    .command("pause")
    .description("stop every worker fetching from a queue; jobs pushed meanwhile wait in it")
    .argument("<queue>", "queue name, e.g. default", queueName);
  addRedisUrlOption(addJsonOption(pause)).action(async (name: string, flags: Flags) => {
    const changed = await withRedis(queueUrl(flags, io, name), (r) => new Queue(r, name).pause());
    if (flags.json) return printJson(io, { queue: name, paused: true, changed });
    io.out(
      changed
        ? `${name}: paused until 'tsqctl unpause ${name}'; ${NOTICE}\n`
        : `${name}: already paused ('tsqctl unpause ${name}' resumes it)\n`,
    );
  });

  const unpause = program
    .command("unpause")
    .description("let workers fetch from a paused queue again")
    .argument("<queue>", "queue name, e.g. default", queueName);
  addRedisUrlOption(addJsonOption(unpause)).action(async (name: string, flags: Flags) => {
    const changed = await withRedis(queueUrl(flags, io, name), (r) => new Queue(r, name).unpause());
    if (flags.json) return printJson(io, { queue: name, paused: false, changed });
    io.out(changed ? `${name}: unpaused; ${NOTICE}\n` : `${name}: was not paused\n`);
  });
}
