import { AppJob } from "./tsqPlugin.js";

/** Sends the welcome email through the app's own mailer (`app.mailer`). */
export class WelcomeEmailJob extends AppJob {
  async perform(email: string): Promise<void> {
    await this.app.mailer.send(email, this.jid);
  }
}
