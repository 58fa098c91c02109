import { Injectable } from "@nestjs/common";
import { Job } from "tsq";
import { Mailer } from "./mailer.service.js";

/** Sends the welcome email through the app's Mailer, injected by Nest. */
@Injectable()
export class WelcomeEmailJob extends Job {
  constructor(private readonly mailer: Mailer) {
    super();
  }

  async perform(email: string): Promise<void> {
    const body = await this.mailer.render("welcome", email);
    await this.mailer.send(email, body, this.jid);
  }
}
