/** ProcessState's work table: a slot's key stays when it goes idle, and only running jobs are shown. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProcessState, type WorkEntry } from "../../src/server/ProcessState.js";

const entry = (jid: string): WorkEntry => ({
  queue: "default",
  payload: `{"jid":"${jid}"}`,
  runAt: 1,
  jid,
  className: "X",
  startedMs: 0,
});

test("busy and work count running jobs only, through idle slots and repeated begins", () => {
  const state = new ProcessState();
  assert.equal(state.busy, 0);
  state.begin("t1", entry("a"));
  state.begin("t2", entry("b"));
  assert.equal(state.busy, 2);
  assert.deepEqual([...state.work.keys()], ["t1", "t2"]);
  state.end("t1");
  assert.equal(state.busy, 1);
  assert.deepEqual(
    [...state.work.entries()].map(([tid, w]) => [tid, w.jid]),
    [["t2", "b"]],
    "an idle slot is not shown",
  );
  state.end("t1"); // twice: no negative count
  assert.equal(state.busy, 1);
  state.begin("t2", entry("c")); // a slot replaced without an end counts once
  assert.equal(state.busy, 1);
  assert.equal(state.work.get("t2")?.jid, "c");
  state.begin("t1", entry("d"));
  assert.equal(state.busy, 2);
  for (let i = 0; i < 10_000; i++) {
    state.end("t1");
    state.begin("t1", entry(String(i)));
  }
  assert.equal(state.busy, 2);
  assert.equal(state.work.get("t1")?.jid, "9999");
});
