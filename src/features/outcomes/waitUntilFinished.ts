/**
 * `await waitUntilFinished(jid, { timeout })`: the job's end, from any process. Alone it opens one
 * blocking connection for the wait; many concurrent waits should share an OutcomeWatcher (`watcher`).
 * `jid` may be `performAsync`'s null (a dropped push): the wait rejects with an ArgumentError saying so.
 */
import type { Client } from "../../client/Client.js";
import { OutcomeWatcher, type WaitOptions } from "./OutcomeWatcher.js";
import type { JobResult } from "./record.js";

export interface WaitUntilFinishedOptions extends WaitOptions {
  /** Whose Redis to watch (default: the default client). */
  client?: Client;
  /** A shared watcher (one connection for every wait); default: one of its own, closed after. */
  watcher?: OutcomeWatcher;
}

export async function waitUntilFinished(jid: string | null, options: WaitUntilFinishedOptions): Promise<JobResult> {
  if (options?.watcher) return options.watcher.wait(jid, options);
  const watcher = new OutcomeWatcher(options?.client ? { client: options.client } : {});
  try {
    return await watcher.wait(jid, options);
  } finally {
    await watcher.close();
  }
}
