import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Job } from "tsq";
import { startTestWorker, type TestWorker } from "tsq/testing";

class ResizeJob extends Job {
  static done: string[] = [];
  async perform(image: string, sizes: number[]): Promise<void> {
    for (const size of sizes) await ThumbnailJob.performAsync(image, size);
    ResizeJob.done.push(image);
  }
}

class ThumbnailJob extends Job {
  static done: string[] = [];
  perform(image: string, size: number): void {
    ThumbnailJob.done.push(`${image}@${size}`);
  }
}

let worker: TestWorker;
before(async () => {
  worker = await startTestWorker({ jobs: [ResizeJob, ThumbnailJob], concurrency: 5 });
});
after(() => worker.stop());

test("a job and the jobs it pushes have run when drain resolves", async () => {
  await ResizeJob.performAsync("cat.png", [64, 128]);
  await worker.drain();
  assert.deepEqual(ResizeJob.done, ["cat.png"]);
  assert.deepEqual(ThumbnailJob.done.sort(), ["cat.png@128", "cat.png@64"]);
});
