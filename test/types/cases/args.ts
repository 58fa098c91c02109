/**
 * Type tests of `perform` arguments: only what survives JSON compiles (src/client/jsonArgs.ts).
 * Compiled by test/types/types.test.ts, which also checks that the refusals read well.
 */
import { Job, type JsonValue } from "tsq";

class DateJob extends Job {
  perform(_when: Date): void {}
}
class MapJob extends Job {
  perform(_byId: Map<string, number>): void {}
}
class UndefinedJob extends Job {
  perform(_value: string | undefined): void {}
}
class Point {
  constructor(readonly x: number) {}
  norm(): number {
    return Math.abs(this.x);
  }
}
class InstanceJob extends Job {
  perform(_point: Point): void {}
}
class FunctionJob extends Job {
  perform(_callback: () => void): void {}
}
class NestedJob extends Job {
  perform(_report: { title: string; at: Date }): void {}
}

// @ts-expect-error -- a Date
void DateJob.performAsync(new Date());
// @ts-expect-error -- a Map
void MapJob.performAsync(new Map([["a", 1]]));
// @ts-expect-error -- undefined
void UndefinedJob.performAsync(undefined);
// @ts-expect-error -- a class instance (it has methods)
void InstanceJob.performAsync(new Point(1));
// @ts-expect-error -- a function
void FunctionJob.performAsync(() => {});
// @ts-expect-error -- a Date inside an object
void NestedJob.performAsync({ title: "t", at: new Date() });
// @ts-expect-error -- every way to push is checked: performIn
void DateJob.performIn(60, new Date());
// @ts-expect-error -- performAt
void DateJob.performAt(new Date(), new Date());
// @ts-expect-error -- set(...).performAsync
void DateJob.set({ queue: "low" }).performAsync(new Date());
// @ts-expect-error -- performBulk
void DateJob.performBulk([[new Date()]]);

// What survives JSON compiles: primitives, null, arrays, plain objects, optional parameters and
// properties (left out), interfaces, readonly arrays, JsonValue, unknown.
interface Report {
  title: string;
  pages?: number;
  tags: readonly string[];
  author: { name: string; email: string | null };
}
class GoodJob extends Job {
  perform(_a: string, _b: number, _c: boolean, _d: null, _report: Report, _extra?: { note?: string }): void {}
}
class RestJob extends Job {
  perform(..._ids: number[]): void {}
}
class LooseJob extends Job {
  perform(_value: JsonValue, _anything: unknown, _record: Record<string, number>): void {}
}
const report: Report = { title: "t", tags: ["x"], author: { name: "a", email: null } };
void GoodJob.performAsync("a", 1, true, null, report);
void GoodJob.performAsync("a", 1, true, null, report, { note: "n" });
void GoodJob.performIn(5, "a", 1, false, null, report, {});
void RestJob.performAsync(1, 2, 3);
void RestJob.performBulk([[1], [2, 3]]);
void LooseJob.performAsync({ a: [1, "b", null] }, new Date(), { a: 1 });
