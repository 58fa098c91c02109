import { AppJob } from "./tsqPlugin.js";

/** Sends the welcome email through the app's own mailer (`app.mailer`). */
export class WelcomeEmailJob extends AppJob {
  async perform(email: string): Promise<void> {
    const body = await this.app.mailer.render("welcome", email);
    await this.app.mailer.send(email, body, this.jid);
  }
}
