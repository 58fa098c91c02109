/**
 * The Sidekiq job that carries an ActiveJob. Rails' Sidekiq adapter pushes a wrapper whose only
 * argument is `job.serialize`:
 *
 *   {"retry":true,"queue":"default","class":"ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
 *    "wrapped":"GreetJob","args":[{"job_class":"GreetJob","job_id":"0f5c…","provider_job_id":null,
 *    "queue_name":"default","priority":null,"arguments":["bob",{"count":3,"_aj_ruby2_keywords":["count"]}],
 *    "executions":0,"exception_executions":{},"locale":"en","timezone":"UTC",
 *    "enqueued_at":"2024-05-01T10:00:00Z"}],"jid":"…","created_at":…,"enqueued_at":…}
 *
 * Sidekiq >= 7.3 with Rails >= 7.2 names the wrapper `Sidekiq::ActiveJob::Wrapper`; both are run.
 * The worker runs the registered class named by `job_class` (never a class chosen by path), and a
 * failure is retried on the wrapper payload itself, as Sidekiq does, so Ruby sees an ordinary retry.
 */
import type { JobPayload } from "../../wire/payload.js";
import { ActiveJobDeserializationError, deserializeArguments } from "./deserialize.js";

/** Rails <= 7.1 adapters, and every Sidekiq version. */
export const LEGACY_WRAPPER = "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";
/** Sidekiq >= 7.3 with Rails >= 7.2. */
export const SIDEKIQ_WRAPPER = "Sidekiq::ActiveJob::Wrapper";

/** What a TypeScript job run from an ActiveJob sees as `this.activeJob`. */
export interface ActiveJobContext {
  /** The Rails class name (`job_class`), e.g. `GreetJob` or `Admin::ReportJob`. */
  readonly jobClass: string;
  /** ActiveJob's own id (a UUID), the one Rails logs. */
  readonly jobId: string;
  /** The Sidekiq jid, as Rails' JobWrapper passes it. */
  readonly providerJobId: string;
  readonly queueName: string;
  readonly priority: number | null;
  /** Runs so far including this one, as the Rails job sees it inside `perform` (stored value + 1). */
  readonly executions: number;
  readonly exceptionExecutions: Readonly<Record<string, number>>;
  /** I18n locale at enqueue, e.g. `en`. */
  readonly locale: string;
  /** `Time.zone` name at enqueue (e.g. `UTC`, `Tokyo`), or null when Rails had none. */
  readonly timezone: string | null;
  /** ISO 8601 enqueue time written by Rails. */
  readonly enqueuedAt: string | null;
  /** ISO 8601 run time, written by Rails >= 7.1 for scheduled jobs. */
  readonly scheduledAt: string | null;
  /** True when the last argument came as Ruby keyword arguments. */
  readonly keywords: boolean;
}

/** The Rails job inside a wrapper payload, read without deserializing its arguments. */
export interface WrappedActiveJob {
  /** The class to look up in the registry. */
  readonly className: string;
  /**
   * Deserializes the arguments, sets `instance.activeJob` and returns the arguments for `perform`;
   * throws ActiveJobDeserializationError on a malformed payload (the job fails and is retried).
   */
  prepare(instance: object): unknown[];
}

/** The ActiveJob inside `job`, or undefined when `job` is not an ActiveJob wrapper. Cheap for plain jobs. */
export function wrappedActiveJob(job: JobPayload): WrappedActiveJob | undefined {
  if (job.class !== LEGACY_WRAPPER && job.class !== SIDEKIQ_WRAPPER) return undefined;
  const data: unknown = job.args[0];
  const hash =
    data !== null && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  const jobClass = hash?.job_class;
  // A wrapper without a readable job_class still names the class to show (and retry) by `wrapped`.
  const className = typeof jobClass === "string" && jobClass !== "" ? jobClass : displayName(job);
  return {
    className,
    prepare: (instance) => {
      if (hash === undefined || job.args.length !== 1) {
        throw new ActiveJobDeserializationError(
          `${job.class} expects one argument, the serialized ActiveJob hash; got ${job.args.length} argument(s)`,
        );
      }
      if (typeof jobClass !== "string" || jobClass === "")
        throw new ActiveJobDeserializationError("the ActiveJob hash has no job_class string");
      const { args, keywords } = deserializeArguments(hash.arguments);
      (instance as { activeJob?: ActiveJobContext }).activeJob = contextOf(hash, className, job.jid, keywords);
      return args;
    },
  };
}

function displayName(job: JobPayload): string {
  return typeof job.wrapped === "string" && job.wrapped !== "" ? job.wrapped : job.class;
}

function contextOf(hash: Record<string, unknown>, jobClass: string, jid: string, keywords: boolean): ActiveJobContext {
  const string = (key: string) => (typeof hash[key] === "string" ? hash[key] : null);
  const executions = typeof hash.executions === "number" ? hash.executions : 0;
  const counts = hash.exception_executions;
  return {
    jobClass,
    jobId: string("job_id") ?? "",
    providerJobId: jid,
    queueName: string("queue_name") ?? "default",
    priority: typeof hash.priority === "number" ? hash.priority : null,
    executions: executions + 1,
    exceptionExecutions:
      counts !== null && typeof counts === "object" && !Array.isArray(counts)
        ? Object.fromEntries(Object.entries(counts).filter(([, n]) => typeof n === "number"))
        : {},
    locale: string("locale") ?? "en",
    timezone: string("timezone"),
    enqueuedAt: string("enqueued_at"),
    scheduledAt: string("scheduled_at"),
    keywords,
  };
}
