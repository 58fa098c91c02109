/**
 * The Redis connections of one worker. Each opens lazily: a worker that is built and never started
 * opens no socket, so it cannot hold the process. The stop closes them all.
 */
import { connect, type TsqRedis } from "../platform/redis/connection.js";
import type { StopBudget } from "./StopBudget.js";

export class Connections {
  private readonly all: TsqRedis[] = [];

  constructor(private readonly redisUrl: string) {}

  /** A new connection named `name` in CLIENT LIST; `blocking` for fetchers (BRPOP holds it). */
  open(name: string, blocking = false): TsqRedis {
    const conn = connect(this.redisUrl, { name, blocking, lazy: true });
    this.all.push(conn);
    return conn;
  }

  /** Drops every socket at once: the worker failed to build and nothing may keep the process alive. */
  disconnect(): void {
    for (const conn of this.all) conn.disconnect();
  }

  /** QUITs each within the stop's budget; one that does not answer in time is dropped. */
  async close(budget: StopBudget): Promise<void> {
    await Promise.all(
      this.all.map(async (c) => {
        // A lazy connection never used has no socket; QUIT would open one just to close it.
        if (c.status === "wait" || !(await budget.within(c, () => c.quit()))) c.disconnect();
      }),
    );
  }
}
