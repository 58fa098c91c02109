/**
 * A NestJS application with a tsq worker inside it: `Signups.signUp(email)` enqueues a
 * WelcomeEmailJob, which the worker runs with the Mailer Nest injects.
 *
 *   const app = await NestFactory.createApplicationContext(AppModule.forRoot(process.env.REDIS_URL));
 *   app.enableShutdownHooks(); // SIGTERM stops the worker too
 *   await app.init();          // the worker starts
 *   await app.close();         // and stops
 */
import "reflect-metadata";
import { Module, type DynamicModule } from "@nestjs/common";
import { Mailer } from "./mailer.service.js";
import { Signups } from "./signups.service.js";
import { TsqModule } from "./tsq.module.js";
import { WelcomeEmailJob } from "./welcomeEmail.job.js";

@Module({})
export class AppModule {
  static forRoot(redis?: string): DynamicModule {
    return {
      module: AppModule,
      imports: [TsqModule.forRoot({ ...(redis ? { redis } : {}), jobs: [WelcomeEmailJob], concurrency: 5 })],
      providers: [Mailer, WelcomeEmailJob, Signups],
    };
  }
}
