/**
 * The job a sidekiq-cron schedule enqueues, built as sidekiq-cron 1.8.0's `enque!` builds it in a
 * process that has no Ruby constants (tsq's case), except that a class this process has registered
 * is pushed with its own options, as Ruby pushes a class it knows:
 *
 *   registered here    { ...class's static options, class, queue, args }   (`perform_async`)
 *   active_job: true   an ActiveJob for Rails, through performLater          (`perform_later`)
 *   otherwise          the stored `message` with `args` replaced             (`Sidekiq::Client.push`)
 *
 * With `date_as_argument`, the push time (epoch seconds, float) is appended to the arguments.
 */
import type { Client } from "../../client/Client.js";
import { wireOptions } from "../../client/options.js";
import { performLater } from "../activejob/performLater.js";
import { symbolKeys } from "../activejob/values.js";
import type { Registry } from "../../server/Registry.js";
import type { SidekiqCronSchedule } from "./SidekiqCronStore.js";

/** Pushes the schedule's job now; resolves to its jid (null when a client middleware stopped it). */
export async function pushSidekiqCron(
  schedule: SidekiqCronSchedule,
  client: Client,
  registry: Registry | undefined,
  now: number,
): Promise<string | null> {
  const args = schedule.dateAsArgument ? [...schedule.args, now] : schedule.args;
  const klass = registry?.get(schedule.klass);
  if (klass) {
    return client.push({ ...wireOptions(klass.options), class: klass, queue: schedule.queue, args });
  }
  if (schedule.activeJob) {
    const activeArgs = schedule.symbolizeArgs ? args.map(symbolize) : args;
    const { jid } = await performLater(schedule.klass, activeArgs, { queue: activeJobQueue(schedule), client });
    return jid;
  }
  return client.push({ ...schedule.message, class: messageClass(schedule), queue: schedule.queue, args });
}

function messageClass(schedule: SidekiqCronSchedule): string {
  const named = schedule.message?.class;
  return typeof named === "string" && named !== "" ? named : schedule.klass;
}

/** `queue_name_with_prefix`: the schedule's own prefix and delimiter (default "_"). */
function activeJobQueue(schedule: SidekiqCronSchedule): string {
  if (!schedule.queueNamePrefix) return schedule.queue;
  return `${schedule.queueNamePrefix}${schedule.queueNameDelimiter ?? "_"}${schedule.queue}`;
}

/** `symbolize_args`: a plain object argument gets Symbol keys. */
function symbolize(arg: unknown): unknown {
  if (arg === null || typeof arg !== "object" || Array.isArray(arg)) return arg;
  return symbolKeys(arg as Record<string, unknown>);
}
