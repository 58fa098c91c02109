/**
 * A worker's and a Client's events as an app sees them from the package root: each feature declares its
 * own (its plugin.ts augments JobEvents or ClientEvents), and those declarations reach `import "tsq"`.
 */
import type { Client, EndStatus, JobPayload, ServerContext } from "tsq";

/** True only when T and U are the same type (`any` is neither). */
type Equal<T, U> = (<G>() => G extends T ? 1 : 2) extends <G>() => G extends U ? 1 : 2 ? true : false;
/** `exactly<T>()(value)` compiles only when `value` is of type T itself, not `any`. */
const exactly =
  <T>() =>
  <U>(value: U, ...mismatch: Equal<T, U> extends true ? [] : [never]): unknown => [value, mismatch];

declare const ctx: ServerContext;
declare const client: Client;

ctx.events.on("end", (_job, _queue, outcome) => void exactly<EndStatus>()(outcome.status));
ctx.events.on("switched", (_job, _queue, action) => void exactly<"deferred" | "dropped">()(action));
ctx.events.on("expired", (job) => void exactly<JobPayload>()(job));
ctx.events.on("limited", (_job, _queue, action) => void exactly<"parked" | "refused">()(action));
ctx.events.on("rateLimited", (_j, _q, action) => void exactly<"parked" | "refused" | "rescheduled">()(action));
ctx.events.on("durable", (_job, _queue, outcome) => void exactly<"timedOut" | "abandoned">()(outcome));
ctx.events.on("progress", (_job, _queue, progress) => void exactly<number>()(progress.n));
client.events.on("deduplicated", (_job, _queue, holder) => void exactly<string>()(holder));
client.events.on("uniqueRejected", (_job, _queue, holder) => void exactly<string>()(holder));
client.events.on("limited", (_job, _queue, action) => void exactly<"parked" | "refused">()(action));
client.events.on("batchFired", (bid, event) => void [exactly<string>()(bid), exactly<string>()(event)]);
// @ts-expect-error -- a kill switch's action is a word, not a number
ctx.events.on("switched", (_job: JobPayload, _queue: string, action: number) => void action);
// @ts-expect-error -- a batch callback's bid is a string
client.events.on("batchFired", (bid: number) => void bid);
