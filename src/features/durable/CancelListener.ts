/**
 * The service through which a worker hears cancels of its running jobs: a subscriber connection on
 * `tsq:cancel:<identity>` (cancel() found the job in this process's work hash) and `tsq:cancel` (the
 * owner was not known yet). Only tsq processes subscribe, so a Ruby process never gets a message it
 * does not know.
 */
import type { ServerContext } from "../../server/context.js";
import type { Service } from "../../server/plugin.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { CANCEL_BROADCAST, cancelChannel } from "../../wire/keys.js";
import type { RunControl } from "./RunControl.js";

/** Longest jid accepted from the channel; anything else is not a jid. */
const MAX_JID = 100;

export class CancelListener implements Service {
  readonly name = "durable-cancel";
  private connection: TsqRedis | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly control: RunControl,
  ) {}

  start(): void {
    if (this.connection) return;
    const connection = this.ctx.connect("tsq-cancel", true);
    this.connection = connection;
    connection.on("message", (_channel: string, message: string) => {
      if (typeof message !== "string" || message.length > MAX_JID) return;
      if (this.control.cancel(message)) this.ctx.logger.info({ jid: message }, "cancel received for a running job");
    });
    connection.subscribe(cancelChannel(this.ctx.identity), CANCEL_BROADCAST).catch((error: unknown) => {
      // Stopped before the subscription was made (a stop right after start): nothing was lost.
      if (this.connection !== connection) return;
      this.ctx.logger.warn({ err: error }, "could not subscribe to cancels; running jobs cannot be cancelled here");
    });
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    try {
      await connection.quit();
    } catch {
      connection.disconnect();
    }
  }
}
