/**
 * Declaring schedules: the config file's `cron:` section (src/platform/config/loadConfig.ts, merged by
 * src/options/workerOptions.ts) and a job class's `static cron` (src/features/cron/schedules.ts). Every bad entry is
 * rejected with a message naming it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/platform/config/loadConfig.js";
import { resolveWorkerOptions } from "../../../src/options/workerOptions.js";
import { CRON_SETTINGS, cronSettings } from "../../../src/features/cron/settings.js";
import { classSchedules, validateCron } from "../../../src/features/cron/schedules.js";
import type { CronEntry } from "../../../src/platform/config/cronEntry.js";
import { ConfigError } from "../../../src/wire/errors.js";
import { Registry, type RunnableClass } from "../../../src/server/Registry.js";

const dir = mkdtempSync(join(tmpdir(), "tsq-cron-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function load(text: string, environment = "development") {
  const path = join(dir, `config-${++files}.yml`);
  writeFileSync(path, text);
  return loadConfig(path, environment, "config/tsq.yml");
}

function configError(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.match(error.message, message);
    return true;
  });
}

class ReportJob {
  perform(): void {}
}
class CleanupJob {
  static cron = "*/5 * * * *";
  perform(): void {}
}
class DigestJob {
  static cron = [
    { name: "digest-daily", cron: "0 8 * * *", tz: "Europe/Paris", args: ["daily"] },
    { name: "digest-weekly", cron: "0 8 * * 1", args: ["weekly"], catchUp: true, queue: "low" },
  ];
  perform(): void {}
}

function registry(...classes: RunnableClass[]): Registry {
  const r = new Registry();
  for (const klass of classes) r.register(klass);
  return r;
}

const FILE = `
cron:
  nightly_report:
    cron: "0 3 * * *"
    class: ReportJob
    queue: low
    args: [daily, 7]
    tz: Asia/Tokyo
    description: Nightly sales report
    catch_up: true
  every_second:
    cron: "* * * * * *"
    class: ReportJob
    enabled: false
`;

test("the cron: section reads into entries, in file order, with defaults filled in", () => {
  const { cron } = load(FILE);
  assert.deepEqual(cron, [
    {
      name: "nightly_report",
      cron: "0 3 * * *",
      class: "ReportJob",
      queue: "low",
      args: ["daily", 7],
      tz: "Asia/Tokyo",
      description: "Nightly sales report",
      enabled: true,
      catchUp: true,
      source: "config/tsq.yml",
    },
    {
      name: "every_second",
      cron: "* * * * * *",
      class: "ReportJob",
      args: [],
      enabled: false,
      catchUp: false,
      source: "config/tsq.yml",
    },
  ]);
  assert.deepEqual(load("cron:\n").cron, []);
});

test("a bad cron: entry is rejected with a message naming it", () => {
  const entry = (body: string) => () => load(`cron:\n  nightly:\n${body}`);
  configError(
    entry('    cron: "61 * * * *"\n    class: ReportJob\n'),
    /^config\/tsq\.yml: cron\.nightly\.cron: "61 \* \* \* \*" is not a valid cron expression/,
  );
  configError(
    entry('    cron: "* * *"\n    class: ReportJob\n'),
    /cron\.nightly\.cron: "\* \* \*" has 3 fields; expected 5/,
  );
  configError(
    entry('    cron: "0 3 * * *"\n    class: ReportJob\n    tz: Asia/Atlantis\n'),
    /cron\.nightly\.tz: unknown time zone "Asia\/Atlantis"/,
  );
  configError(entry("    class: ReportJob\n"), /cron\.nightly\.cron is missing/);
  configError(entry('    cron: "0 3 * * *"\n'), /cron\.nightly\.class is missing/);
  configError(
    entry('    cron: "0 3 * * *"\n    class: ReportJob\n    klass: X\n'),
    /unknown key "cron\.nightly\.klass"/,
  );
  configError(
    entry('    cron: "0 3 * * *"\n    class: ReportJob\n    args: 5\n'),
    /cron\.nightly\.args must be a list of job arguments/,
  );
  configError(
    entry('    cron: "0 3 * * *"\n    class: ReportJob\n    catch_up: yes please\n'),
    /cron\.nightly\.catch_up must be true or false/,
  );
  configError(
    () => load('cron:\n  "bad name":\n    cron: "* * * * *"\n    class: ReportJob\n'),
    /cron\.bad name: a schedule name must use letters/,
  );
  configError(() => load("cron: [a, b]\n"), /cron must be a mapping/);
});

test("leader and grace timings come from the file; a renewal not below the TTL is rejected", () => {
  const cwd = mkdtempSync(join(dir, "cwd-"));
  mkdirSync(join(cwd, "config"));
  const write = (text: string) => writeFileSync(join(cwd, "config/tsq.yml"), text);
  // The cron plug-in declares these keys: the CLI reads them with the built-in features' settings.
  const resolve = () => resolveWorkerOptions([], {}, cwd, CRON_SETTINGS);
  write("leader_ttl: 3\nleader_renew_interval: 0.5\nleader_check_interval: 1\ncron_grace_period: 10\n" + FILE);
  const { options } = resolve();
  assert.equal(options.leaderTtl, 3);
  assert.equal(options.leaderRenewInterval, 0.5);
  assert.equal(options.leaderCheckInterval, 1);
  assert.equal(options.cronGracePeriod, 10);
  assert.deepEqual(
    options.cron.map((e) => e.name),
    ["nightly_report", "every_second"],
  );
  write("");
  const defaults = resolve().options;
  assert.equal(defaults.leaderTtl, undefined, "a setting given nowhere stays absent: its plug-in reads the default");
  const read = cronSettings(defaults);
  assert.deepEqual(
    [read.leaderTtl, read.leaderRenewInterval, read.leaderCheckInterval, read.cronGracePeriod, defaults.cron],
    [60, 15, 60, 60, []],
  );
  write("leader_ttl: 4\n");
  assert.equal(cronSettings(resolve().options).leaderRenewInterval, 1, "a short TTL shortens the default renewal");
  write("leader_ttl: 5\nleader_renew_interval: 5\n");
  configError(resolve, /^config\/tsq\.yml: leader_renew_interval \(5 s\) must be below leader_ttl \(5 s\)/);
  write("leader_renew_interval: 60\n");
  configError(resolve, /leader_renew_interval \(60 s\) must be below leader_ttl \(60 s\)/);
  write("leader_ttl: 2.5\n");
  configError(resolve, /leader_ttl must be an integer from 1 to 86400 \(seconds\)/);
  // Where the cron plug-in's settings are not known, its keys are refused like any unknown key.
  write("leader_ttl: 3\n");
  configError(
    () => resolveWorkerOptions([], {}, cwd),
    /unknown key "leader_ttl"; fix its spelling or remove it \(known keys: .*\); a plug-in's key is known only where that plug-in runs$/,
  );
});

test("cronSettings, as the plug-in reads them from a worker's options: a renewal not below the TTL is refused", () => {
  assert.deepEqual(cronSettings({ leaderTtl: 4, sidekiqCron: true }), {
    leaderTtl: 4,
    leaderRenewInterval: 1,
    leaderCheckInterval: 60,
    cronGracePeriod: 60,
    sidekiqCron: true,
    sidekiqCronPollInterval: 10,
  });
  configError(() => cronSettings({ leaderTtl: 4, leaderRenewInterval: 4 }), /leader_renew_interval \(4 s\)/);
  configError(
    () => cronSettings({ leaderCheckInterval: 0 }),
    /`leaderCheckInterval` must be a number of seconds above 0/,
  );
  configError(() => cronSettings({ sidekiqCron: "yes" }), /`sidekiqCron` must be true or false/);
});

test("validateCron: an unknown class is rejected naming the schedule and where it was declared", () => {
  const entries = load(FILE).cron ?? [];
  assert.equal(validateCron(entries, registry(ReportJob)).length, 2);
  configError(
    () => validateCron(entries, registry(CleanupJob)),
    /^cron schedule "nightly_report" \(config\/tsq\.yml\): class "ReportJob" is not a registered job class \(registered: CleanupJob\)/,
  );
});

test("static cron on a job class declares schedules in code", () => {
  const entries = classSchedules(registry(ReportJob, CleanupJob, DigestJob));
  assert.deepEqual(entries, [
    {
      name: "CleanupJob",
      cron: "*/5 * * * *",
      class: "CleanupJob",
      args: [],
      enabled: true,
      catchUp: false,
      source: "static cron of CleanupJob",
    },
    {
      name: "digest-daily",
      cron: "0 8 * * *",
      class: "DigestJob",
      args: ["daily"],
      tz: "Europe/Paris",
      enabled: true,
      catchUp: false,
      source: "static cron of DigestJob[0]",
    },
    {
      name: "digest-weekly",
      cron: "0 8 * * 1",
      class: "DigestJob",
      args: ["weekly"],
      queue: "low",
      enabled: true,
      catchUp: true,
      source: "static cron of DigestJob[1]",
    },
  ]);
  assert.equal(validateCron([], registry(CleanupJob, DigestJob)).length, 3);
});

test("a bad static cron, or a name used twice, is rejected naming the class", () => {
  class BadExpression {
    static cron = "every morning";
    perform(): void {}
  }
  class Unnamed {
    static cron = [{ cron: "0 * * * *" }, { cron: "30 * * * *" }];
    perform(): void {}
  }
  class BadField {
    static cron = { cron: "0 * * * *", when: "later" };
    perform(): void {}
  }
  class BadZone {
    static cron = { cron: "0 * * * *", tz: "Nowhere/Land" };
    perform(): void {}
  }
  configError(
    () => validateCron([], registry(BadExpression)),
    /^cron schedule "BadExpression" \(static cron of BadExpression\): "every morning" has 2 fields/,
  );
  configError(
    () => validateCron([], registry(Unnamed)),
    /^static cron of Unnamed\[0\]: a class with several schedules must name each one/,
  );
  configError(() => validateCron([], registry(BadField)), /^static cron of BadField: unknown field "when"/);
  configError(() => validateCron([], registry(BadZone)), /static cron of BadZone\): unknown time zone "Nowhere\/Land"/);
  const clash: CronEntry = {
    name: "CleanupJob",
    cron: "* * * * *",
    class: "CleanupJob",
    args: [],
    enabled: true,
    catchUp: false,
    source: "config/tsq.yml",
  };
  configError(
    () => validateCron([clash], registry(CleanupJob)),
    /^cron schedule "CleanupJob" \(static cron of CleanupJob\): the name is also used by config\/tsq\.yml/,
  );
});
