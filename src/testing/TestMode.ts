/**
 * The one controller of tsq/testing's modes, as Sidekiq::Testing's: installed on the default client
 * (`client.divert`, src/client/plugin.ts), it takes that client's pushes while the mode is fake or
 * inline and lets them through to Redis while it is disable (the default).
 *
 *   fake     pushes are held in memory per class: `HardJob.jobs`, `HardJob.drain()`, `HardJob.clear()`
 *   inline   a push runs `perform` at once, after the JSON round trip a worker would see
 *   disable  pushes go to Redis
 *
 * Everything it holds belongs to this object; tsq/testing makes one and exports its verbs.
 */
import { ArgumentError } from "../wire/errors.js";
import type { JobPayload } from "../wire/payload.js";
import type { PreparedJob, PushDiversion } from "../client/plugin.js";
import { jobClassOf } from "../client/jobClasses.js";
import type { Client } from "../client/Client.js";
import { serverConfig } from "../server/serverConfig.js";
import type { JobFactory } from "../server/context.js";
import { payloadOf, runJob, type HeldJob, type ProgressReport } from "./runJob.js";

export type TestModeName = "fake" | "inline" | "disable";

export interface TestModeOptions {
  /** Builds the instance a job runs on in inline mode and `drain()` (default `new Class()`), as a Worker's. */
  jobFactory?: JobFactory;
}

export class TestMode implements PushDiversion {
  private current: TestModeName = "disable";
  private jobFactory: JobFactory | undefined;
  /** Held jobs by class name, oldest first; a Map keeps the order classes were first pushed in. */
  private readonly held = new Map<string, HeldJob[]>();
  /** What features keep in Redis in production (durable journals, signals), for the jobs run here. */
  readonly memory = new Map<symbol, unknown>();
  /** `this.progress(n, data)` of the jobs run here, by jid, in order. */
  private readonly progress = new Map<string, ProgressReport[]>();

  get mode(): TestModeName {
    return this.current;
  }

  get active(): boolean {
    return this.current !== "disable";
  }

  /** Switches to `mode` and installs this controller on `client` (the default client) if it is not yet. */
  switch(mode: TestModeName, client: Client, options: TestModeOptions = {}): void {
    if (mode !== "fake" && mode !== "inline" && mode !== "disable")
      throw new ArgumentError(`tsq/testing: unknown mode ${JSON.stringify(mode)}; use fake(), inline() or disable()`);
    if (client.diversion !== this) client.divert(this);
    this.current = mode;
    if (options.jobFactory !== undefined) this.jobFactory = options.jobFactory;
  }

  async take(entries: readonly PreparedJob[]): Promise<void> {
    const jobs = entries.map(({ job, json }): HeldJob => ({ json, at: job.at, klass: jobClassOf(job) }));
    if (this.current === "fake") {
      for (const job of jobs) this.hold(job);
      return;
    }
    // Inline: one after the other, in push order; a failure fails the push, as Sidekiq's inline mode raises.
    for (const job of jobs) await this.run(job);
  }

  jobsOf(className: string): readonly JobPayload[] {
    if (this.current !== "fake")
      throw new ArgumentError(
        `${className}.jobs: jobs are held only in fake mode and the mode is ${this.current}; call fake() from tsq/testing first`,
      );
    return (this.held.get(className) ?? []).map(payloadOf);
  }

  async drainOf(className: string): Promise<number> {
    let ran = 0;
    // Shifted before it runs: a job that fails is gone, as Sidekiq's drain; the error reaches the caller.
    for (let next = this.held.get(className)?.shift(); next; next = this.held.get(className)?.shift()) {
      await this.run(next);
      ran++;
    }
    this.held.delete(className);
    return ran;
  }

  clearOf(className: string): void {
    this.held.delete(className);
  }

  /** Runs every held job of every class until none is left (jobs pushed by jobs included). */
  async drainAll(): Promise<number> {
    let ran = 0;
    while (this.held.size > 0) {
      for (const className of [...this.held.keys()]) ran += await this.drainOf(className);
    }
    return ran;
  }

  /** Forgets held jobs, recorded progress and what features kept in memory (durable journals, signals). */
  clearAll(): void {
    this.held.clear();
    this.memory.clear();
    this.progress.clear();
  }

  /** The progress job `jid` reported while it ran in inline mode or `drain()`, oldest first. */
  progressOf(jid: string): ProgressReport[] {
    return [...(this.progress.get(jid) ?? [])];
  }

  /** Every held job, oldest first within its class. */
  allJobs(): JobPayload[] {
    return [...this.held.values()].flat().map(payloadOf);
  }

  private hold(job: HeldJob): void {
    const name = payloadOf(job).class;
    const list = this.held.get(name);
    if (list) list.push(job);
    else this.held.set(name, [job]);
  }

  private run(job: HeldJob): Promise<void> {
    return runJob(job, serverConfig().middleware, this.jobFactory, (jid, report) => {
      const list = this.progress.get(jid);
      if (list) list.push(report);
      else this.progress.set(jid, [report]);
    });
  }
}
