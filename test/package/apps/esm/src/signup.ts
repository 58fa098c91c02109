// What the app does when someone signs up: the code docs/testing.md's Vitest example tests.
import { Job } from "tsq";

export class WelcomeEmailJob extends Job {
  static sent: string[] = [];
  perform(userId: number, locale: string): void {
    WelcomeEmailJob.sent.push(`${userId}:${locale}`);
  }
}

export async function signUp(userId: number): Promise<void> {
  await WelcomeEmailJob.set({ queue: "mailers" }).performAsync(userId, "en");
  await WelcomeEmailJob.performIn(24 * 3600, userId, "en"); // a reminder tomorrow
}
