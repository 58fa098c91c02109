/** A cluster child's batch file (and the batch text in it): no Redis needed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BatchWriter, makeBatchDir, readBatchFile, removeBatchFiles } from "../../src/cluster/batchFile.js";
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
