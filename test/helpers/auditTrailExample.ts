/**
 * examples/plugins/auditTrail compiled as an app compiles it (its own tsconfig, `import ... from "tsq"`),
 * into a directory of this test file's own under dist/ (inside the package, so "tsq" resolves to this
 * build), with its Lua beside it. Two test files compiling into one shared directory at once could each
 * import the other's half-written output. Removed after the file.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after } from "node:test";
import { ROOT } from "./tsqProcess.js";

const SOURCE = join(ROOT, "examples/plugins/auditTrail");

// Registered at the file's top level: an `after` called inside a `before` hook would run when the hook ends.
const compiled = new Set<string>();
after(() => {
  for (const dir of compiled) rmSync(dir, { recursive: true, force: true });
});

/** Compiles the example; returns the directory holding plugin.js, worker.js, jobs.js and the Lua. */
export function compileAuditTrail(): string {
  const parent = join(ROOT, "dist/examples/plugins");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "auditTrail-"));
  compiled.add(dir);
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", SOURCE, "--outDir", dir],
    { encoding: "utf8" },
  );
  assert.equal(tsc.status, 0, `examples/plugins/auditTrail does not compile: ${tsc.stdout}${tsc.stderr}`);
  copyFileSync(join(SOURCE, "audit-append-1.lua"), join(dir, "audit-append-1.lua"));
  return dir;
}
