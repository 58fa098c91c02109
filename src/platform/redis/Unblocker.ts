/**
 * Unblocker: ends a blocking command (BLMPOP, BRPOP, BLMOVE) waiting in Redis, from another connection,
 * with `CLIENT UNBLOCK <id>`; the waiting command returns as if its timeout had passed.
 *
 * Why not close the blocked connection's socket: Redis notices a closed socket only when it next reads
 * from it, and until then it may serve that client's BLMPOP a job pushed meanwhile (say, a job being
 * requeued by a stopping process), writing it to a socket nobody reads: the job is gone.
 */
import type { TsqRedis } from "./connection.js";

export class Unblocker {
  /** The blocked connection's server-side id (CLIENT ID), learnt at each (re)connect. */
  private id: number | undefined;

  /**
   * @param blocking the connection whose waits are ended
   * @param control  another connection, which sends CLIENT UNBLOCK
   */
  constructor(
    blocking: TsqRedis,
    private readonly control: TsqRedis,
  ) {
    const learn = (): void => {
      this.id = undefined;
      blocking.client("ID").then(
        (id) => (this.id = Number(id)),
        () => undefined, // the connection dropped again: the next `ready` asks again
      );
    };
    blocking.on("ready", learn);
    if (blocking.status === "ready") learn();
  }

  /** True when the id is known, so `unblock` can act. */
  get ready(): boolean {
    return this.id !== undefined;
  }

  /** Ends the wait in progress, if any. Resolves true when a wait was ended. */
  async unblock(): Promise<boolean> {
    if (this.id === undefined) return false;
    return Number(await this.control.client("UNBLOCK", this.id)) === 1;
  }
}
