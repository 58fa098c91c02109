/** Type tests of tsq/testing as an app imports it. */
import { Job, type JobPayload } from "tsq";
import { fake, inline, disable, drainAll, clearAll, startTestWorker, type TestWorker } from "tsq/testing";

class HardJob extends Job {
  perform(_name: string): void {}
}

fake();
inline({ jobFactory: (Class) => new Class() });
disable();
const held: readonly JobPayload[] = HardJob.jobs;
const ran: Promise<number> = HardJob.drain();
HardJob.clear();
const all: Promise<number> = drainAll();
clearAll();
const worker: Promise<TestWorker> = startTestWorker({ jobs: [HardJob], queues: ["default"] });
void [held, ran, all, worker];
// @ts-expect-error -- `jobs` is read-only
HardJob.jobs = [];
