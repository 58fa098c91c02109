/** A cluster child's batch file (and the batch text in it): no Redis needed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  BatchWriter,
  batchReporter,
  makeBatchDir,
  readBatchFile,
  removeBatchFiles,
} from "../../src/cluster/batchFile.js";
import { batchJobs, describeBatch } from "../../src/server/ProcessState.js";

test("a batch file holds the latest batch; a shorter one after a longer one reads back exactly", () => {
  const dir = makeBatchDir();
  const path = join(dir, "child-0-1");
  const writer = new BatchWriter(path);
  const long = describeBatch([
    { queue: "default", job: '{"class":"HardJob","args":[1],"jid":"a1"}' },
    { queue: "mail", job: '{"jid":"b2","class":"MailJob","args":[]}' },
  ]);
  writer.write(long);
  assert.deepEqual(batchJobs(readBatchFile(path)), [
    { queue: "default", class: "HardJob", jid: "a1" },
    { queue: "mail", class: "MailJob", jid: "b2" },
  ]);
  writer.write(describeBatch([{ queue: "q", job: '{"class":"X","jid":"c3"}' }]));
  assert.deepEqual(batchJobs(readBatchFile(path)), [{ queue: "q", class: "X", jid: "c3" }]);
  writer.write(describeBatch([{ queue: "q", job: "not json at all" }]));
  assert.deepEqual(batchJobs(readBatchFile(path)), [{ queue: "q", class: undefined, jid: undefined }]);
  writer.dispose();
  assert.equal(existsSync(dir), false, "the last child out removes the directory");
  assert.equal(readBatchFile(path), "", "a missing file reads as no batch");
  removeBatchFiles(dir); // idempotent
});

test("a child that cannot create its batch file reports batches through the fallback (IPC), with a warning", () => {
  const warnings: string[] = [];
  const log = { warn: (_: unknown, message: string) => warnings.push(message) };
  const sent: string[] = [];
  const empty = makeBatchDir();
  const report = batchReporter(join(empty, "no-such-dir", "child-0-1"), log as never, (batch) => sent.push(batch));
  removeBatchFiles(empty);
  report("default\tX\tj1");
  assert.deepEqual(sent, ["default\tX\tj1"], "nothing is lost");
  assert.match(warnings.join(), /cannot create the batch file/);

  const dir = makeBatchDir();
  const path = join(dir, "child-0-2");
  const toFile = batchReporter(path, log as never, (batch) => sent.push(batch));
  toFile("q\tY\tj2");
  assert.equal(readBatchFile(path), "q\tY\tj2");
  assert.equal(sent.length, 1, "a writable file takes the batch, not IPC");
  removeBatchFiles(dir);
});
