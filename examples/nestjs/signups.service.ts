import { Injectable } from "@nestjs/common";
import { Tsq } from "./tsq.module.js";
import { WelcomeEmailJob } from "./welcomeEmail.job.js";

/** Signs a user up; the welcome email goes out in the background. Returns the job's jid. */
@Injectable()
export class Signups {
  constructor(private readonly tsq: Tsq) {}

  async signUp(email: string): Promise<string | null> {
    return WelcomeEmailJob.set({ client: this.tsq.client }).performAsync(email);
  }
}
