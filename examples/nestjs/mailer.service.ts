import { Injectable } from "@nestjs/common";

/** The app's mail service. Keeps what it sent. */
@Injectable()
export class Mailer {
  readonly sent: { to: string; jid: string | undefined }[] = [];

  async send(to: string, jid: string | undefined): Promise<void> {
    this.sent.push({ to, jid });
  }
}
