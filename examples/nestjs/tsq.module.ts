/**
 * A NestJS module that runs a tsq worker inside the application's lifecycle: the worker starts when
 * the application has bootstrapped and stops (running jobs get `timeout` seconds) when it shuts down.
 * Job classes are Nest providers: each job runs on an instance from Nest's container, so constructor
 * injection works in jobs as in any service.
 *
 *   @Module({
 *     imports: [TsqModule.forRoot({ redis: process.env.REDIS_URL, jobs: [WelcomeEmailJob] })],
 *     providers: [Mailer, WelcomeEmailJob],
 *   })
 *   export class AppModule {}
 *
 * Enqueue through the injected `Tsq`'s client: `WelcomeEmailJob.set({ client: tsq.client })`.
 */
import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import { Client, Worker, type WorkerConfig } from "tsq";

export interface TsqModuleOptions {
  /** Redis URL; default REDIS_URL, then redis://127.0.0.1:6379/0. */
  redis?: string;
  /** The job classes, each also listed as a provider of some module. */
  jobs: WorkerConfig["jobs"];
  queues?: WorkerConfig["queues"];
  concurrency?: number;
  /** Seconds running jobs get at shutdown (default 25). */
  timeout?: number;
}

export const TSQ_OPTIONS = Symbol("TSQ_OPTIONS");

@Injectable()
export class Tsq implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Pushes jobs to this module's Redis. */
  readonly client: Client;
  private worker: Worker | undefined;

  constructor(
    @Inject(TSQ_OPTIONS) private readonly options: TsqModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.client = new Client(options.redis ? { redis: options.redis } : {});
  }

  /** The process identity in Redis while the worker runs. */
  get identity(): string | undefined {
    return this.worker?.identity;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.worker = new Worker({
      ...this.options,
      jobFactory: (Class) => {
        // Nest keeps one instance per provider, and tsq sets each job's jid, payload and signal on the
        // instance it runs: so each job gets its own copy holding the provider's injected services.
        const provider = this.moduleRef.get(Class, { strict: false });
        return Object.assign(Object.create(Object.getPrototypeOf(provider) as object) as typeof provider, provider);
      },
    });
    await this.worker.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.stop({ timeout: this.options.timeout ?? 25 });
    await this.client.close();
  }
}

@Module({})
export class TsqModule {
  static forRoot(options: TsqModuleOptions): DynamicModule {
    return {
      module: TsqModule,
      global: true,
      providers: [{ provide: TSQ_OPTIONS, useValue: options }, Tsq],
      exports: [Tsq],
    };
  }
}
